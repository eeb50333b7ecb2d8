#!/usr/bin/env python3
"""Create a virtual input device through /dev/uinput, play an event script on it, destroy it.

Used by the e2e tests inside the scripts/vm/run guest. Python standard library only: the uinput
ioctls are made with fcntl.ioctl, exactly as evflow's Swift code would make them.

  uinput-device.py {keyboard,mouse,wheelmouse,switch,joystick,touchpad,tablet,gamepad} [options]

Event script (--events TEXT or --events-file FILE; whitespace separated, '#' starts a comment):
  CODE=VALUE   one event; CODE is a name (KEY_A, BTN_LEFT, REL_X, SW_LID, ...) or TYPE:CODE
               in numbers (1:30 or 0x01:0x1e)
  .            SYN_REPORT (ends a frame)
  +10ms +0.5s  sleep
               (the events between two sleeps, waits or touches are written in one write(2))
  @FILE        wait until FILE exists (a handshake with the reader)
  !FILE        create FILE (tell the reader the script got this far)
Without a script a short default one for the kind is played (see DEFAULT_SCRIPTS).

Modes:
  --cycles N            create, play, destroy N times (hot-plug loops; --gap between cycles)
  --destroy-after SECS  loop the script without pauses and destroy the device SECS after
                        creation, right after an event that is not a SYN_REPORT, so the
                        reader sees an unfinished frame and then the device vanish

  --repeat              give the device EV_REP: the input core repeats its held keys
                        (value 2) at the default delay and period, as a real keyboard's
  --leds FILE           give the device LEDs (num, caps, scroll lock) and append every LED
                        event the kernel sends back through uinput (what a program writes
                        to the device's node, e.g. a twin's Caps Lock passed on) to FILE, one
                        "LED CODE VALUE" line each
  --bus NAME|N          the device's bus type (default virtual): i8042 makes a keyboard or a
                        touchpad look built in, as libinput's disable-while-typing wants
  --ff FILE             (gamepad) force feedback: FF_RUMBLE, FF_GAIN, 16 effects; answers the
                        kernel's upload and erase requests as a driver does (a uinput device
                        with EV_FF must: the uploading program waits for its answer) and
                        appends one line per request and play to FILE: "FF upload ID TYPE
                        STRONG WEAK LENGTH", "FF erase ID", "FF play ID VALUE", "FF gain VALUE"

Progress lines on stdout: "created NAME SYSNAME NODE", "played N events", "destroyed SYSNAME".
"""
import argparse
import fcntl
import os
import struct
import sys
import threading
import time


# ---------------------------------------------------------------- kernel interface
def _ioc(direction, nr, size):
    """The kernel's _IOC(direction, 'U', nr, size) for <linux/uinput.h>."""
    return (direction << 30) | (size << 16) | (ord("U") << 8) | nr


_IOC_NONE, _IOC_WRITE, _IOC_READ = 0, 1, 2
UI_DEV_CREATE = _ioc(_IOC_NONE, 1, 0)
UI_DEV_DESTROY = _ioc(_IOC_NONE, 2, 0)
UI_DEV_SETUP = _ioc(_IOC_WRITE, 3, 92)          # struct uinput_setup
UI_SET_EVBIT = _ioc(_IOC_WRITE, 100, 4)
UI_SET_KEYBIT = _ioc(_IOC_WRITE, 101, 4)
UI_SET_RELBIT = _ioc(_IOC_WRITE, 102, 4)
UI_SET_ABSBIT = _ioc(_IOC_WRITE, 103, 4)
UI_ABS_SETUP = _ioc(_IOC_WRITE, 4, 28)          # struct uinput_abs_setup
UI_SET_PHYS = _ioc(_IOC_WRITE, 108, 8)          # takes a char *
UI_SET_SWBIT = _ioc(_IOC_WRITE, 109, 4)
UI_SET_LEDBIT = _ioc(_IOC_WRITE, 105, 4)
UI_SET_PROPBIT = _ioc(_IOC_WRITE, 110, 4)
UI_GET_SYSNAME_64 = _ioc(_IOC_READ, 44, 64)
UI_SET_FFBIT = _ioc(_IOC_WRITE, 107, 4)
UI_BEGIN_FF_UPLOAD = _ioc(_IOC_READ | _IOC_WRITE, 200, 104)   # struct uinput_ff_upload
UI_END_FF_UPLOAD = _ioc(_IOC_WRITE, 201, 104)
UI_BEGIN_FF_ERASE = _ioc(_IOC_READ | _IOC_WRITE, 202, 12)     # struct uinput_ff_erase
UI_END_FF_ERASE = _ioc(_IOC_WRITE, 203, 12)

EV_SYN, EV_KEY, EV_REL, EV_ABS, EV_SW, EV_LED, EV_REP = 0x00, 0x01, 0x02, 0x03, 0x05, 0x11, 0x14
EV_FF, EV_UINPUT, UI_FF_UPLOAD, UI_FF_ERASE = 0x15, 0x0101, 1, 2
FF_RUMBLE, FF_GAIN, FF_EFFECTS_MAX = 0x50, 0x60, 16
LEDS = (0x00, 0x01, 0x02)                         # LED_NUML, LED_CAPSL, LED_SCROLLL
SYN_REPORT = 0
BUS_VIRTUAL = 0x06
# --bus names (linux/input.h BUS_*): i8042 is a laptop's built-in keyboard and touchpad.
BUSES = {"usb": 0x03, "bluetooth": 0x05, "virtual": BUS_VIRTUAL, "i8042": 0x11}
INPUT_PROP_POINTER, INPUT_PROP_BUTTONPAD = 0x00, 0x02
INPUT_EVENT = struct.Struct("qqHHi")              # struct input_event on x86_64 (24 bytes)
UINPUT_SETUP = struct.Struct("HHHH80sI")          # input_id, name[80], ff_effects_max
ABS_SETUP = struct.Struct("H2x6i")                # code, input_absinfo (value min max fuzz flat res)
# struct uinput_ff_upload on x86_64: request_id, retval, then struct ff_effect (48 bytes: type,
# id, direction, trigger, replay (length, delay), then the union at 16; a rumble's strong and
# weak magnitudes first) twice, the new effect and the old one.
FF_UPLOAD = struct.Struct("Ii HhHHHHH2xHH28x 48x")
FF_ERASE = struct.Struct("IiI")                    # request_id, retval, effect_id

# Names this script understands (linux/input-event-codes.h). Anything else: TYPE:CODE.
CODES = {"SYN_REPORT": (EV_SYN, 0)}
CODES.update({f"KEY_{c}": (EV_KEY, n) for c, n in zip("1234567890", range(2, 12))})
CODES.update({f"KEY_{c}": (EV_KEY, n) for c, n in zip("QWERTYUIOP", range(16, 26))})
CODES.update({f"KEY_{c}": (EV_KEY, n) for c, n in zip("ASDFGHJKL", range(30, 39))})
CODES.update({f"KEY_{c}": (EV_KEY, n) for c, n in zip("ZXCVBNM", range(44, 51))})
CODES.update({"KEY_ESC": (EV_KEY, 1), "KEY_ENTER": (EV_KEY, 28), "KEY_LEFTCTRL": (EV_KEY, 29),
              "KEY_LEFTSHIFT": (EV_KEY, 42), "KEY_SPACE": (EV_KEY, 57),
              "BTN_LEFT": (EV_KEY, 0x110), "BTN_RIGHT": (EV_KEY, 0x111), "BTN_MIDDLE": (EV_KEY, 0x112),
              "REL_X": (EV_REL, 0x00), "REL_Y": (EV_REL, 0x01), "REL_WHEEL": (EV_REL, 0x08),
              "REL_HWHEEL": (EV_REL, 0x06), "REL_WHEEL_HI_RES": (EV_REL, 0x0b), "REL_HWHEEL_HI_RES": (EV_REL, 0x0c),
              "SW_LID": (EV_SW, 0x00), "BTN_TRIGGER": (EV_KEY, 0x120), "BTN_THUMB": (EV_KEY, 0x121),
              "BTN_TOOL_PEN": (EV_KEY, 0x140), "BTN_TOOL_FINGER": (EV_KEY, 0x145),
              "BTN_TOUCH": (EV_KEY, 0x14a), "BTN_STYLUS": (EV_KEY, 0x14b),
              "BTN_TOOL_DOUBLETAP": (EV_KEY, 0x14d), "ABS_PRESSURE": (EV_ABS, 0x18),
              "BTN_SOUTH": (EV_KEY, 0x130), "BTN_EAST": (EV_KEY, 0x131), "BTN_START": (EV_KEY, 0x13b),
              "ABS_MT_SLOT": (EV_ABS, 0x2f), "ABS_MT_POSITION_X": (EV_ABS, 0x35),
              "ABS_MT_POSITION_Y": (EV_ABS, 0x36), "ABS_MT_TRACKING_ID": (EV_ABS, 0x39)})
ABS_AXES = {"ABS_X": 0x00, "ABS_Y": 0x01, "ABS_Z": 0x02, "ABS_RX": 0x03, "ABS_RY": 0x04, "ABS_RZ": 0x05,
            "ABS_THROTTLE": 0x06, "ABS_RUDDER": 0x07, "ABS_WHEEL": 0x08, "ABS_GAS": 0x09,
            "ABS_BRAKE": 0x0a, "ABS_HAT0X": 0x10, "ABS_HAT0Y": 0x11}
CODES.update({name: (EV_ABS, code) for name, code in ABS_AXES.items()})

# What each kind advertises. The keyboard claims KEY_ESC..KEY_MICMUTE like real hardware, so
# udev's input_id builtin tags it ID_INPUT_KEY and ID_INPUT_KEYBOARD.
KINDS = {
    "keyboard": {"product": 0x0101, "bits": [(UI_SET_KEYBIT, c) for c in range(1, 249)]},
    "mouse": {"product": 0x0102, "bits": [(UI_SET_KEYBIT, 0x110), (UI_SET_KEYBIT, 0x111),
                                          (UI_SET_KEYBIT, 0x112), (UI_SET_RELBIT, 0x00),
                                          (UI_SET_RELBIT, 0x01), (UI_SET_RELBIT, 0x08)]},
    # A mouse with high-resolution wheels (REL_WHEEL_HI_RES, 120 a detent), as hid-input makes one.
    "wheelmouse": {"product": 0x0108, "bits": [(UI_SET_KEYBIT, 0x110), (UI_SET_KEYBIT, 0x111),
                                               (UI_SET_KEYBIT, 0x112)] +
                   [(UI_SET_RELBIT, c) for c in (0x00, 0x01, 0x06, 0x08, 0x0b, 0x0c)]},
    "switch": {"product": 0x0103, "bits": [(UI_SET_SWBIT, 0x00)]},
    # A joystick with many absolute axes (udev: ID_INPUT_JOYSTICK): 13 ABS axes, two buttons.
    "joystick": {"product": 0x0104, "bits": [(UI_SET_KEYBIT, 0x120), (UI_SET_KEYBIT, 0x121)] +
                 [(UI_SET_ABSBIT, c) for c in ABS_AXES.values()]},
    # A touchpad as libinput wants one (udev: ID_INPUT_TOUCHPAD): multi-touch protocol B, two
    # slots, 100 x 62.5 mm at 40 units/mm, a clickpad (INPUT_PROP_BUTTONPAD: the pad itself is
    # the left button), as most laptops have.
    "touchpad": {"product": 0x0105, "props": [INPUT_PROP_POINTER, INPUT_PROP_BUTTONPAD],
                 "bits": [(UI_SET_KEYBIT, c) for c in (0x110, 0x145, 0x14a, 0x14d)] +
                 [(UI_SET_ABSBIT, c) for c in (0x00, 0x01, 0x2f, 0x35, 0x36, 0x39)],
                 # code: (min, max, resolution)
                 "abs": {0x00: (0, 4000, 40), 0x01: (0, 2500, 40), 0x2f: (0, 1, 0), 0x35: (0, 4000, 40),
                         0x36: (0, 2500, 40), 0x39: (0, 65535, 0)}},
    # A pen tablet (udev: ID_INPUT_TABLET), external like a desk tablet (not INPUT_PROP_DIRECT):
    # pen and stylus button, pressure, 200 x 125 mm at 100 units/mm (libinput rejects a
    # tablet without a resolution).
    # A game pad (udev: ID_INPUT_JOYSTICK) as the kernel's xpad driver makes one: two sticks,
    # two triggers, a d-pad hat, the face, shoulder and menu buttons. Rumble with --ff.
    "gamepad": {"product": 0x0107,
                "bits": [(UI_SET_KEYBIT, c) for c in (0x130, 0x131, 0x133, 0x134, 0x136, 0x137,
                                                      0x13a, 0x13b, 0x13c, 0x13d, 0x13e)] +
                [(UI_SET_ABSBIT, c) for c in (0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x10, 0x11)],
                "abs": {0x00: (-32768, 32767, 0), 0x01: (-32768, 32767, 0), 0x03: (-32768, 32767, 0),
                        0x04: (-32768, 32767, 0), 0x02: (0, 255, 0), 0x05: (0, 255, 0),
                        0x10: (-1, 1, 0), 0x11: (-1, 1, 0)}},
    "tablet": {"product": 0x0106,
               "bits": [(UI_SET_KEYBIT, c) for c in (0x140, 0x14a, 0x14b)] +
               [(UI_SET_ABSBIT, c) for c in (0x00, 0x01, 0x18)],
               "abs": {0x00: (0, 20000, 100), 0x01: (0, 12500, 100), 0x18: (0, 2047, 0)}},
}
EVBIT_FOR = {UI_SET_KEYBIT: EV_KEY, UI_SET_RELBIT: EV_REL, UI_SET_SWBIT: EV_SW, UI_SET_ABSBIT: EV_ABS}

DEFAULT_SCRIPTS = {
    "keyboard": "KEY_H=1 . KEY_H=0 . +10ms KEY_I=1 . KEY_I=0 .",
    "mouse": "REL_X=5 REL_Y=-3 . +10ms BTN_LEFT=1 . BTN_LEFT=0 . +10ms REL_WHEEL=1 .",
    "wheelmouse": "REL_X=5 . +10ms REL_WHEEL=1 REL_WHEEL_HI_RES=120 .",
    "switch": "SW_LID=1 . +50ms SW_LID=0 .",
    "joystick": "ABS_X=1000 ABS_Y=-2000 ABS_THROTTLE=300 . +10ms BTN_TRIGGER=1 . BTN_TRIGGER=0 .",
    "gamepad": "ABS_X=12000 ABS_Y=-8000 . +10ms BTN_SOUTH=1 . BTN_SOUTH=0 . +10ms ABS_X=0 ABS_Y=0 .",
    "touchpad": ("ABS_MT_SLOT=0 ABS_MT_TRACKING_ID=1 ABS_MT_POSITION_X=2000 ABS_MT_POSITION_Y=1000"
                 " BTN_TOUCH=1 BTN_TOOL_FINGER=1 ABS_X=2000 ABS_Y=1000 . +10ms"
                 " ABS_MT_POSITION_X=2040 ABS_X=2040 . +10ms ABS_MT_TRACKING_ID=-1 BTN_TOUCH=0 BTN_TOOL_FINGER=0 ."),
    "tablet": ("ABS_X=10000 ABS_Y=6000 BTN_TOOL_PEN=1 . +10ms ABS_PRESSURE=500 BTN_TOUCH=1 . +10ms"
               " ABS_PRESSURE=0 BTN_TOUCH=0 . +10ms BTN_TOOL_PEN=0 ."),
}


# ---------------------------------------------------------------- script
def parse_script(text):
    """Tokens -> list of ("event", type, code, value) | ("sleep", seconds) | ("wait", path)."""
    steps = []
    for line in text.splitlines():
        for tok in line.split("#", 1)[0].split():
            if tok == ".":
                steps.append(("event", EV_SYN, SYN_REPORT, 0))
            elif tok.startswith("+"):
                amount = tok[1:]
                if amount.endswith("ms"):
                    steps.append(("sleep", float(amount[:-2]) / 1000))
                elif amount.endswith("s"):
                    steps.append(("sleep", float(amount[:-1])))
                else:
                    sys.exit(f"uinput-device: bad sleep {tok!r} (use +10ms or +0.5s)")
            elif tok.startswith("@"):
                steps.append(("wait", tok[1:]))
            elif tok.startswith("!"):
                steps.append(("touch", tok[1:]))
            elif "=" in tok:
                name, value = tok.split("=", 1)
                if name in CODES:
                    etype, code = CODES[name]
                elif ":" in name:
                    etype, code = (int(part, 0) for part in name.split(":", 1))
                else:
                    sys.exit(f"uinput-device: unknown code {name!r} (use a known name or TYPE:CODE)")
                steps.append(("event", etype, code, int(value, 0)))
            else:
                sys.exit(f"uinput-device: cannot parse {tok!r}")
    return steps


def wait_for(path, timeout=60.0):
    deadline = time.monotonic() + timeout
    while not os.path.exists(path):
        if time.monotonic() > deadline:
            sys.exit(f"uinput-device: timed out waiting for {path}")
        time.sleep(0.005)


def say(text):
    print(f"uinput-device: {text}", flush=True)


# ---------------------------------------------------------------- device
class Device:
    def __init__(self, kind, name, vendor, product, phys, led_log=None, bus=BUS_VIRTUAL, repeat=False,
                 ff_log=None):
        # Read-write only with LEDs or force feedback: their events and requests come back
        # through the uinput fd.
        self.fd = os.open("/dev/uinput", (os.O_RDWR if led_log or ff_log else os.O_WRONLY) | os.O_CLOEXEC)
        spec = KINDS[kind]
        fcntl.ioctl(self.fd, UI_SET_EVBIT, EV_SYN)
        if ff_log:
            fcntl.ioctl(self.fd, UI_SET_EVBIT, EV_FF)
            for code in (FF_RUMBLE, FF_GAIN):
                fcntl.ioctl(self.fd, UI_SET_FFBIT, code)
        if led_log:
            fcntl.ioctl(self.fd, UI_SET_EVBIT, EV_LED)
            for code in LEDS:
                fcntl.ioctl(self.fd, UI_SET_LEDBIT, code)
        if repeat:      # EV_REP: the input core repeats held keys itself (delay 250, period 33)
            fcntl.ioctl(self.fd, UI_SET_EVBIT, EV_REP)
        for evbit in sorted({EVBIT_FOR[req] for req, _ in spec["bits"]}):
            fcntl.ioctl(self.fd, UI_SET_EVBIT, evbit)
        for req, code in spec["bits"]:
            fcntl.ioctl(self.fd, req, code)
            if req == UI_SET_ABSBIT and "abs" in spec:
                lo, hi, res = spec["abs"][code]
                fcntl.ioctl(self.fd, UI_ABS_SETUP, ABS_SETUP.pack(code, 0, lo, hi, 0, 0, res))
            elif req == UI_SET_ABSBIT:   # range -32768..32767, fuzz 16, flat 128
                fcntl.ioctl(self.fd, UI_ABS_SETUP, ABS_SETUP.pack(code, 0, -32768, 32767, 16, 128, 0))
        for prop in spec.get("props", ()):
            fcntl.ioctl(self.fd, UI_SET_PROPBIT, prop)
        if phys:
            fcntl.ioctl(self.fd, UI_SET_PHYS, phys.encode() + b"\0")
        product = spec["product"] if product is None else product
        fcntl.ioctl(self.fd, UI_DEV_SETUP, UINPUT_SETUP.pack(bus, vendor, product, 1, name.encode()[:79],
                                                             FF_EFFECTS_MAX if ff_log else 0))
        fcntl.ioctl(self.fd, UI_DEV_CREATE)
        buf = bytearray(64)
        fcntl.ioctl(self.fd, UI_GET_SYSNAME_64, buf)
        self.sysname = buf.split(b"\0")[0].decode()          # e.g. "input7"
        self.node = self._find_node()
        if led_log or ff_log:
            threading.Thread(target=self._feedback, args=(led_log, ff_log), daemon=True).start()

    def _feedback(self, led_log, ff_log):
        """What programs write to the device comes back here: LED events, and with force
        feedback the kernel's upload and erase requests (answered at once, as a driver would:
        the program's EVIOCSFF waits for it) and the plays."""
        while True:
            try:
                data = os.read(self.fd, INPUT_EVENT.size * 16)
            except OSError:
                return                                       # destroyed and closed
            for off in range(0, len(data) - len(data) % INPUT_EVENT.size, INPUT_EVENT.size):
                _, _, etype, code, value = INPUT_EVENT.unpack_from(data, off)
                if etype == EV_LED and led_log:
                    line = f"LED {code} {value}"
                elif etype == EV_UINPUT and code == UI_FF_UPLOAD and ff_log:
                    line = self._answer_upload(value)
                elif etype == EV_UINPUT and code == UI_FF_ERASE and ff_log:
                    buf = bytearray(FF_ERASE.pack(value, 0, 0))
                    fcntl.ioctl(self.fd, UI_BEGIN_FF_ERASE, buf)
                    _, _, effect_id = FF_ERASE.unpack(buf)
                    fcntl.ioctl(self.fd, UI_END_FF_ERASE, FF_ERASE.pack(value, 0, effect_id))
                    line = f"FF erase {effect_id}"
                elif etype == EV_FF and ff_log:
                    line = f"FF gain {value}" if code == FF_GAIN else f"FF play {code} {value}"
                else:
                    continue
                with open(led_log if etype == EV_LED else ff_log, "a") as f:
                    f.write(line + "\n")

    def _answer_upload(self, request_id):
        buf = bytearray(FF_UPLOAD.size)
        FF_UPLOAD.pack_into(buf, 0, request_id, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        fcntl.ioctl(self.fd, UI_BEGIN_FF_UPLOAD, buf)
        _, _, etype, effect_id, _, _, _, length, _, strong, weak = FF_UPLOAD.unpack(buf)
        struct.pack_into("i", buf, 4, 0)                     # retval: accepted
        fcntl.ioctl(self.fd, UI_END_FF_UPLOAD, bytes(buf))
        return f"FF upload {effect_id} {etype:#x} {strong} {weak} {length}"

    def _find_node(self):
        # The eventN child appears right after UI_DEV_CREATE returns; the /dev node (devtmpfs)
        # with it. udev may still be processing the "add" when we return.
        sysdir = f"/sys/devices/virtual/input/{self.sysname}"
        for _ in range(1000):
            events = [e for e in os.listdir(sysdir) if e.startswith("event")]
            if events and os.path.exists(f"/dev/input/{events[0]}"):
                return f"/dev/input/{events[0]}"
            time.sleep(0.002)
        sys.exit(f"uinput-device: no event node for {self.sysname}")

    def emit(self, etype, code, value):
        os.write(self.fd, INPUT_EVENT.pack(0, 0, etype, code, value))   # the kernel stamps it

    def write(self, events):
        """Writes packed input_events (time 0: the kernel stamps each frame as it passes)."""
        view = memoryview(events)
        while view:
            view = view[os.write(self.fd, view):]

    def destroy(self):
        fcntl.ioctl(self.fd, UI_DEV_DESTROY)
        os.close(self.fd)


def play(dev, steps):
    """Runs the script once; returns how many events were written. The events between two
    sleeps, waits or touches go to the kernel in one write(2): a bounce written right after a
    release must reach the kernel right after it, and under emulation the guest can stall for
    20 ms between two writes (a slow host descheduling the virtual CPU), far less often inside
    one system call."""
    count = 0
    batch = bytearray()
    for step in steps:
        if step[0] == "event":
            batch += INPUT_EVENT.pack(0, 0, *step[1:])
            count += 1
            continue
        if batch:
            dev.write(batch)
            batch = bytearray()
        if step[0] == "sleep":
            time.sleep(step[1])
        elif step[0] == "touch":
            open(step[1], "w").close()
        else:
            wait_for(step[1])
    if batch:
        dev.write(batch)
    return count


def play_until_destroyed(dev, steps, deadline):
    """Loops the script's events (no sleeps, no waits) until the deadline has passed, then
    destroys the device right after an event that is not a SYN_REPORT."""
    events = [s for s in steps if s[0] == "event"]
    if not any(s[1] != EV_SYN for s in events):
        sys.exit("uinput-device: --destroy-after needs a script with non-SYN events")
    count = 0
    while True:
        for _, etype, code, value in events:
            dev.emit(etype, code, value)
            count += 1
            if etype != EV_SYN and time.monotonic() >= deadline:
                dev.destroy()
                return count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("kind", choices=sorted(KINDS))
    ap.add_argument("--name", help="device name (default: 'evflow test KIND')")
    ap.add_argument("--vendor", type=lambda s: int(s, 0), default=0x1d6b)
    ap.add_argument("--product", type=lambda s: int(s, 0), help="default: one per kind")
    ap.add_argument("--phys", help="physical path (UI_SET_PHYS)")
    ap.add_argument("--bus", default="virtual", type=lambda s: BUSES[s] if s in BUSES else int(s, 0),
                    help=f"bus type: {', '.join(BUSES)} or a number (default virtual)")
    ap.add_argument("--events", help="event script (see above)")
    ap.add_argument("--events-file", help="file holding the event script")
    ap.add_argument("--node-file", help="write the /dev/input/eventN path here after creating")
    ap.add_argument("--wait-before-create", metavar="FILE", help="wait until FILE exists first")
    ap.add_argument("--hold", type=float, default=0.2, help="seconds to keep the device after the script")
    ap.add_argument("--cycles", type=int, default=1, help="create/play/destroy this many times")
    ap.add_argument("--gap", type=float, default=0.0, help="seconds between cycles")
    ap.add_argument("--leds", metavar="FILE", help="LEDs; log the LED events written to the device to FILE")
    ap.add_argument("--repeat", action="store_true", help="EV_REP: the kernel autorepeats held keys")
    ap.add_argument("--ff", metavar="FILE", help="force feedback (rumble); log requests and plays to FILE")
    ap.add_argument("--destroy-after", type=float, metavar="SECS",
                    help="destroy the device while still emitting, SECS after creating it")
    args = ap.parse_args()

    text = DEFAULT_SCRIPTS[args.kind]
    if args.events is not None:
        text = args.events
    if args.events_file:
        with open(args.events_file) as f:
            text = f.read()
    steps = parse_script(text)
    name = args.name or f"evflow test {args.kind}"

    if args.wait_before_create:
        wait_for(args.wait_before_create)
    for cycle in range(args.cycles):
        if cycle and args.gap:
            time.sleep(args.gap)
        dev = Device(args.kind, name, args.vendor, args.product, args.phys, args.leds, args.bus, args.repeat,
                     args.ff)
        created = time.monotonic()
        say(f"created {name!r} {dev.sysname} {dev.node}")
        if args.node_file:
            with open(args.node_file + ".tmp", "w") as f:
                f.write(dev.node + "\n")
            os.rename(args.node_file + ".tmp", args.node_file)
        if args.destroy_after is not None:
            count = play_until_destroyed(dev, steps, created + args.destroy_after)
            say(f"played {count} events, destroyed {dev.sysname} mid-frame")
            continue
        count = play(dev, steps)
        say(f"played {count} events")
        if args.hold:
            time.sleep(args.hold)
        dev.destroy()
        say(f"destroyed {dev.sysname}")


if __name__ == "__main__":
    main()
