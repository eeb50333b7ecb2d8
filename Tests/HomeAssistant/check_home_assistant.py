"""A real Home Assistant reads evflow's devices through evflow-mqtt (issue #31, item 4).

Run by scripts/check-home-assistant with the Python of a virtual environment where Home
Assistant core is installed from PyPI (aiohttp comes with it). Everything runs on 127.0.0.1 on
free ports, in a temporary directory:

  mosquitto ◄── evflow-mqtt --ha-discovery ◄── evflowd --replay (macro pads, a lid switch, a knob)
      ▲                                              --sysfs (the pads' battery)
      ▲
      └── Home Assistant (onboarded through its API, its MQTT integration added through the
          same config flow a person clicks through)

and asks Home Assistant's own REST and websocket APIs what it made of the discovery documents:
its device registry, entity registry, states and device triggers. The recordings' timings
(docs in their headers) are what the checks wait for.
"""

import argparse
import asyncio
import json
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import time

import aiohttp

HOST = "checkhost"
PAD = "Tests/Fixtures/handmade/ha-macro-pad.evemu"
LID = "Tests/Fixtures/handmade/lid-switch-slow.evemu"
KNOB = "Tests/Fixtures/handmade/ha-knob.evemu"
# The pads are Bluetooth devices with a battery: the pad's recording gets this address (a
# recording has none) and evflowd's --sysfs tree the battery hid-input names after it.
PAD_UNIQ = "a4:c1:38:0e:7d:31"
BATTERY = 73


def pad_with_address(path):
    """The pad's evemu recording as a libinput record file of the same device and events, with
    a `UNIQ` udev property (docs/formats/libinput-record.md): evemu has no line for it."""
    name, ids, bits, events = None, None, {}, []
    with open(PAD) as f:
        for line in f:
            kind, _, rest = line.partition(": ")
            fields = rest.split()
            if kind == "N":
                name = rest.strip()
            elif kind == "I":
                ids = [int(x, 16) for x in fields]
            elif kind == "B":
                bits.setdefault(int(fields[0], 16), []).extend(int(b, 16) for b in fields[1:])
            elif kind == "E":
                sec, usec = fields[0].split(".")
                events.append([int(sec), int(usec), int(fields[1], 16), int(fields[2], 16), int(fields[3])])
    codes = {t: [i * 8 + b for i, byte in enumerate(v) for b in range(8) if byte >> b & 1] for t, v in bits.items()}
    frames, frame = [], []
    for e in events:
        frame.append(e)
        if e[2] == 0 and e[3] == 0:
            frames.append(frame)
            frame = []
    with open(path, "w") as f:
        f.write(f"# {PAD} with UNIQ (written by check_home_assistant.py)\nversion: 1\nndevices: 1\ndevices:\n")
        f.write(f"- evdev:\n    name: {json.dumps(name)}\n    id: {json.dumps(ids)}\n    codes:\n")
        for t in sorted(codes):
            if codes[t]:
                f.write(f"      {t}: {json.dumps(codes[t])}\n")
        f.write(f"  udev:\n    properties:\n    - UNIQ={PAD_UNIQ}\n  events:\n")
        for fr in frames + ([frame] if frame else []):
            f.write("  - evdev:\n" + "".join(f"    - {json.dumps(e)}\n" for e in fr))
    return path


def write_battery(sysfs, capacity, status):
    """The pads' battery as hid-input shows it in sysfs (evflowd --sysfs reads this tree)."""
    supply = os.path.join(sysfs, "class", "power_supply", f"hid-{PAD_UNIQ}-battery")
    os.makedirs(supply, exist_ok=True)
    for attribute, value in (("type", "Battery"), ("scope", "Device"), ("capacity", str(capacity)), ("status", status)):
        with open(os.path.join(supply, attribute), "w") as f:
            f.write(value + "\n")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Failure(Exception):
    pass


class Run:
    """The processes of one check and their logs; everything is stopped at the end."""

    def __init__(self, keep):
        self.dir = tempfile.mkdtemp(prefix="evflow-ha-check.")
        self.keep = keep
        self.procs = []

    def start(self, name, argv, **kw):
        log = open(os.path.join(self.dir, name + ".log"), "w")
        p = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, **kw)
        self.procs.append((name, p))
        return p

    def logs(self, lines=30):
        for name in sorted(os.listdir(self.dir)):
            path = os.path.join(self.dir, name)
            if name.endswith(".log") and os.path.getsize(path) > 0:
                print(f"--- {name} (last {lines} lines)", file=sys.stderr)
                with open(path, errors="replace") as f:
                    for line in f.readlines()[-lines:]:
                        print("  | " + line.rstrip()[:300], file=sys.stderr)

    def stop(self):
        for _, p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
        for _, p in reversed(self.procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
        if self.keep:
            print(f"check-home-assistant: kept {self.dir}")
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


class HomeAssistant:
    """A client of one Home Assistant instance: REST with a bearer token, and one websocket."""

    def __init__(self, url, session):
        self.url, self.session = url, session
        self.token = None
        self.ws = None
        self.next_id = 0

    async def onboard(self):
        """Creates the owner user (the first onboarding step) and logs in as it."""
        client = self.url + "/"
        r = await self.session.post(f"{self.url}/api/onboarding/users", json={
            "client_id": client, "name": "evflow check", "username": "evflow",
            "password": "evflow-check", "language": "en"})
        if r.status != 200:
            raise Failure(f"onboarding: HTTP {r.status}: {await r.text()}")
        code = (await r.json())["auth_code"]
        r = await self.session.post(f"{self.url}/auth/token", data={
            "grant_type": "authorization_code", "code": code, "client_id": client})
        self.tokens = await r.json()
        self.token = self.tokens["access_token"]
        self.ws = await self.session.ws_connect(self.url + "/api/websocket")
        await self.ws.receive_json()
        await self.ws.send_json({"type": "auth", "access_token": self.token})
        reply = await self.ws.receive_json()
        if reply.get("type") != "auth_ok":
            raise Failure(f"websocket login: {reply}")
        return reply["ha_version"]

    async def rest(self, method, path, body=None):
        r = await self.session.request(method, self.url + path, json=body,
                                       headers={"Authorization": "Bearer " + self.token})
        text = await r.text()
        if r.status >= 300:
            raise Failure(f"{method} {path}: HTTP {r.status}: {text}")
        return json.loads(text) if text else None

    async def call(self, message):
        self.next_id += 1
        message = dict(message, id=self.next_id)
        await self.ws.send_json(message)
        while True:
            reply = await self.ws.receive_json()
            if reply.get("id") == self.next_id:
                if not reply.get("success", False):
                    raise Failure(f"websocket {message['type']}: {reply}")
                return reply["result"]

    async def add_mqtt(self, port):
        """The MQTT integration's config flow, as the UI drives it: one form, broker and port."""
        flow = await self.rest("POST", "/api/config/config_entries/flow",
                               {"handler": "mqtt", "show_advanced_options": False})
        if flow.get("step_id") != "broker":
            raise Failure(f"MQTT config flow: unexpected first step {flow}")
        done = await self.rest("POST", f"/api/config/config_entries/flow/{flow['flow_id']}",
                               {"broker": "127.0.0.1", "port": port})
        if done.get("type") != "create_entry" or done["result"]["state"] != "loaded":
            raise Failure(f"MQTT config flow did not end in a loaded entry: {done}")

    async def evflow_devices(self):
        """Device registry entries made from evflow-mqtt's discovery, by their evflow identifier."""
        devices = await self.call({"type": "config/device_registry/list"})
        return {i[1]: d for d in devices for i in d["identifiers"]
                if i[0] == "mqtt" and i[1].startswith(f"evflow_{HOST}_")}

    async def entities_of(self, device_id):
        entities = await self.call({"type": "config/entity_registry/list"})
        return {e["entity_id"]: e for e in entities if e["device_id"] == device_id}

    async def state(self, entity_id):
        return (await self.rest("GET", f"/api/states/{entity_id}"))["state"]


async def wait_for(what, probe, timeout):
    """Polls `probe` (async, returns a value or None) until it gives a value."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            value = await probe()
            if value is not None:
                return value
        except Failure as e:
            last = e
        await asyncio.sleep(0.5)
    raise Failure(f"{what}: not within {timeout} s" + (f" (last error: {last})" if last else ""))


def ok(message):
    print("ok   " + message, flush=True)


async def check(args, run):
    mqtt_port, ha_port = free_port(), free_port()
    with open(os.path.join(run.dir, "mosquitto.conf"), "w") as f:
        # (as root mosquitto would switch to user mosquitto, who cannot read this temp dir)
        f.write(f"listener {mqtt_port} 127.0.0.1\nallow_anonymous true\nuser {pwd.getpwuid(os.getuid()).pw_name}\n")
    run.start("mosquitto", ["mosquitto", "-c", os.path.join(run.dir, "mosquitto.conf")])

    config = os.path.join(run.dir, "ha")
    os.makedirs(config)
    # /local/ (the config's www directory, if it exists at start) serves the screenshot's login page.
    os.makedirs(os.path.join(config, "www"))
    with open(os.path.join(config, "configuration.yaml"), "w") as f:
        # The least that onboarding, the MQTT integration, automations and a counter need;
        # no `default_config` (dozens of integrations this check does not use).
        f.write(f"""homeassistant:
  name: evflow check
  latitude: 0
  longitude: 0
  elevation: 0
  unit_system: metric
  time_zone: UTC
  country: DE
  currency: EUR
http:
  server_host: 127.0.0.1
  server_port: {ha_port}
api:
config:
onboarding:
automation: !include automations.yaml
{"frontend:" if args.screenshot else ""}
counter:
  evflow_double:
    initial: 0
  evflow_knob_right:
    initial: 0
""")
    with open(os.path.join(config, "automations.yaml"), "w") as f:
        f.write("[]\n")
    started = time.monotonic()
    run.start("home-assistant", [args.hass, "--config", config, "--log-file", os.path.join(run.dir, "ha-core.log")])
    url = f"http://127.0.0.1:{ha_port}"
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=20)) as session:
        ha = HomeAssistant(url, session)

        async def onboarding_open():
            try:
                r = await session.get(url + "/api/onboarding")
                return (await r.json()) if r.status == 200 else None
            except aiohttp.ClientError:
                return None
        steps = await wait_for("Home Assistant's HTTP API", onboarding_open, args.start_timeout)
        if steps[0] != {"step": "user", "done": False}:
            raise Failure(f"a fresh Home Assistant should ask for its user first: {steps}")
        version = await ha.onboard()
        await ha.add_mqtt(mqtt_port)
        ok(f"Home Assistant {version} up in {time.monotonic() - started:.0f} s, onboarded, MQTT integration added (broker 127.0.0.1:{mqtt_port})")

        evflow_config = os.path.join(run.dir, "evflow.yaml")
        with open(evflow_config, "w") as f:
            # Gestures for the pads' buttons (a device of buttons only is not classed a keypad
            # in a replay, so a rule turns them on, as a user's would).
            f.write('version: 1\ndevices:\n  - match: { name: "Test Macro Pad" }\n    gestures: on\n')
        sock = os.path.join(run.dir, "evflowd.sock")
        pad_file = pad_with_address(os.path.join(run.dir, "ha-macro-pad.yml"))
        sysfs = os.path.join(run.dir, "sys")
        write_battery(sysfs, BATTERY, "Discharging")
        t0 = time.monotonic()
        run.start("evflowd", [os.path.join(args.bin, "evflowd"), "--replay", pad_file, pad_file, LID, KNOB, "--loop",
                                  "--config", evflow_config, "--socket", sock, "--sysfs", sysfs])
        async def listening():
            return True if os.path.exists(sock) else None
        await wait_for("evflowd's socket", listening, 20)
        run.start("evflow-mqtt", [os.path.join(args.bin, "evflow-mqtt"), "--socket", sock,
                                  "--broker", "127.0.0.1", "--port", str(mqtt_port), "--hostname", HOST,
                                  "--ha-discovery", "--ha-key", "BTN_0"])

        async def all_devices():
            devices = await ha.evflow_devices()
            return devices if len(devices) == 4 else None
        devices = await wait_for("evflow's four devices in Home Assistant's device registry", all_devices, 30)
        seen_after = time.monotonic() - t0
        pads = sorted((d for d in devices.values() if d["name"] == f"Test Macro Pad ({HOST})"), key=lambda d: d["id"])
        lids = [d for d in devices.values() if d["name"] == f"Test Lid Switch ({HOST})"]
        knobs = [d for d in devices.values() if d["name"] == f"Test Knob ({HOST})"]
        if len(pads) != 2 or len(lids) != 1 or len(knobs) != 1:
            raise Failure(f"device names: {sorted(d['name'] for d in devices.values())}")
        pad, lid = pads[0], lids[0]
        for d, model in ((pads[0], "1209:0001 Test Macro Pad"), (pads[1], "1209:0001 Test Macro Pad"), (lid, "0000:0005 Test Lid Switch")):
            if d["manufacturer"] != "evflow" or d["model"] != model:
                raise Failure(f"device {d['name']}: manufacturer {d['manufacturer']!r}, model {d['model']!r}")
        ok(f"device registry: two identical macro pads as two devices ({', '.join(sorted(i for i, d in devices.items() if d in pads))}) "
           f"and the lid, manufacturer evflow, {seen_after:.1f} s after evflowd started")

        pad_entities, lid_entities = await ha.entities_of(pad["id"]), await ha.entities_of(lid["id"])
        button = [e for e in pad_entities if e.startswith("binary_sensor.") and e.endswith("_btn_0")]
        lid_sensor = [e for e in lid_entities if e.startswith("binary_sensor.") and e.endswith("_sw_lid")]
        counters = sorted(e.rsplit("_", 2)[-2] + "_" + e.rsplit("_", 2)[-1] for e in pad_entities
                          if e.startswith("sensor.") and not e.endswith("_battery"))
        if len(button) != 1 or len(lid_sensor) != 1:
            raise Failure(f"entities: pad {sorted(pad_entities)}, lid {sorted(lid_entities)}")
        ok(f"entity registry: {button[0]} (--ha-key BTN_0), {lid_sensor[0]}, the pad's counter sensors {counters}")

        # The pad's battery (item 2): a diagnostic battery sensor on the pad's own device, its
        # state the capacity in the --sysfs tree, the supply's status as an attribute.
        async def pad_battery():
            entities = await ha.entities_of(pad["id"])
            battery = [e for e in entities if e.startswith("sensor.") and e.endswith("_battery")]
            if len(battery) != 1:
                return None
            state = await ha.rest("GET", f"/api/states/{battery[0]}")
            return (battery[0], entities[battery[0]], state) if state["state"] == str(BATTERY) else None
        battery_entity, battery_entry, battery_state = await wait_for(
            f"the pad's battery sensor reading {BATTERY}", pad_battery, 15)
        attributes = battery_state["attributes"]
        if (attributes.get("device_class"), attributes.get("unit_of_measurement"), attributes.get("state_class"),
                battery_entry.get("entity_category"), attributes.get("status")) != ("battery", "%", "measurement", "diagnostic", "discharging"):
            raise Failure(f"{battery_entity}: {battery_state}, entity_category {battery_entry.get('entity_category')}")
        ok(f"{battery_entity}: {BATTERY} % on the pad's device (device_class battery, diagnostic, status discharging)")
        # A new reading, seen at the latest when the replay's loop adds the pad again.
        write_battery(sysfs, 41, "Charging")

        # Device triggers, one per button and gesture, listed before any press (the pads' first
        # press is at 15 s), and the pad's event entity.
        async def pad_triggers():
            listed = await ha.call({"type": "device_automation/trigger/list", "device_id": pad["id"]})
            mqtt = [t for t in listed if t.get("domain") == "mqtt"]
            return mqtt if len(mqtt) == 4 * 7 else None
        triggers = await wait_for("28 MQTT device triggers (4 buttons × 7 gestures) of the first pad", pad_triggers, 15)
        listed_at = time.monotonic() - t0
        if listed_at >= 15.0:
            raise Failure(f"the triggers were listed {listed_at:.1f} s after evflowd started: after the first press")
        pairs = sorted({(t["subtype"], t["type"]) for t in triggers})
        expected_types = {"button_press", "button_release", "button_short_press", "button_double_press",
                          "button_triple_press", "button_long_press", "button_hold"}
        if {sub for sub, _ in pairs} != {"BTN_0", "BTN_1", "BTN_2", "BTN_3"} or {ty for _, ty in pairs} != expected_types:
            raise Failure(f"trigger subtypes and types: {pairs}")
        events = [e for e in pad_entities if e.startswith("event.")]
        if len(events) != 1:
            raise Failure(f"one event entity for the pad's gestures, got {events}")
        ok(f"device triggers: {len(triggers)} (BTN_0..BTN_3 × {len(expected_types)} types) listed {listed_at:.1f} s after "
           f"evflowd started, before any press; event entity {events[0]}")

        # An automation on the first pad's BTN_0 double press that counts, written through
        # Home Assistant's own config API (which reloads automations).
        double = next(t for t in triggers if t["subtype"] == "BTN_0" and t["type"] == "button_double_press")
        await ha.rest("POST", "/api/config/automation/config/evflow_double", {
            "alias": "evflow BTN_0 double", "mode": "queued",
            "triggers": [{k: v for k, v in double.items() if k != "metadata"}],
            "actions": [{"action": "counter.increment", "target": {"entity_id": "counter.evflow_double"}}]})
        async def automation_on():
            states = await ha.rest("GET", "/api/states")
            autos = [x for x in states if x["entity_id"].startswith("automation.")]
            return autos if autos and autos[0]["state"] == "on" else None
        autos = await wait_for("the automation loaded", automation_on, 20)
        if await ha.state("counter.evflow_double") != "0":
            raise Failure("the counter moved before any press")
        ok(f"{autos[0]['entity_id']}: on, triggered by the first pad's BTN_0 button_double_press; counter at 0")

        # The knob: REL_DIAL's rotary steps as device triggers, before any turn; an automation
        # on rotate_right adds each step's count (the trigger's payload document) to a counter.
        knob = knobs[0]
        knob_listed = await ha.call({"type": "device_automation/trigger/list", "device_id": knob["id"]})
        knob_pairs = sorted((t["subtype"], t["type"]) for t in knob_listed if t.get("domain") == "mqtt")
        if ("REL_DIAL", "rotate_right") not in knob_pairs or ("REL_DIAL", "rotate_left") not in knob_pairs:
            raise Failure(f"the knob's triggers: {knob_pairs}")
        right = next(t for t in knob_listed if t.get("subtype") == "REL_DIAL" and t["type"] == "rotate_right")
        await ha.rest("POST", "/api/config/automation/config/evflow_knob", {
            "alias": "evflow knob right", "mode": "queued",
            "triggers": [{k: v for k, v in right.items() if k != "metadata"}],
            "actions": [{"action": "counter.set_value", "target": {"entity_id": "counter.evflow_knob_right"},
                         "data": {"value": "{{ states('counter.evflow_knob_right') | int + trigger.payload_json.count }}"}}]})
        async def knob_automation_on():
            states = await ha.rest("GET", "/api/states")
            autos = [x for x in states if x["entity_id"].startswith("automation.") and x["attributes"].get("friendly_name") == "evflow knob right"]
            return autos if autos and autos[0]["state"] == "on" else None
        await wait_for("the knob's automation loaded", knob_automation_on, 20)
        knob_event = [e for e in await ha.entities_of(knob["id"]) if e.startswith("event.")]
        if len(knob_event) != 1:
            raise Failure(f"one event entity for the knob, got {knob_event}")
        ok(f"knob: device triggers {[p for p in knob_pairs if p[0] == 'REL_DIAL']} before any turn; an automation sums rotate_right counts")

        # The lid recording: closed at 0.1 s, opened at 6 s, closed at 12 s. An `opening`
        # binary sensor is on when open; Home Assistant evaluates the discovery's value template.
        async def lid_state(expected, after, until):
            await asyncio.sleep(max(0.0, t0 + after - time.monotonic()))
            while True:
                state, at = await ha.state(lid_sensor[0]), time.monotonic() - t0
                if state == expected:
                    return at
                if at > until:
                    raise Failure(f"{lid_sensor[0]} at {at:.1f} s: {state}, expected {expected}")
                await asyncio.sleep(0.2)
        if seen_after > 4.0:
            raise Failure(f"discovery took {seen_after:.1f} s: too late to see the lid closed (0.1 s – 6 s)")
        closed_at = await lid_state("off", 0.5, 5.5)
        opened_at = await lid_state("on", 6.0, 11.5)
        closed_again_at = await lid_state("off", 12.0, 19.5)
        ok(f"{lid_sensor[0]}: off at {closed_at:.1f} s, on at {opened_at:.1f} s, off at {closed_again_at:.1f} s "
           "(the recording's lid closes at 0.1 s, opens at 6 s, closes at 12 s)")

        # The pads' BTN_0 double press at 15.0–15.33 s (both pads: only the first's trigger is in
        # the automation), final when the 300 ms window after 15.33 s passed; BTN_1 at 20 s.
        await asyncio.sleep(max(0.0, t0 + 17.0 - time.monotonic()))
        counted = await ha.state("counter.evflow_double")
        event_state = await ha.rest("GET", f"/api/states/{events[0]}")
        if counted != "1":
            raise Failure(f"counter.evflow_double after the double press: {counted}, expected 1")
        if event_state["attributes"].get("event_type") != "BTN_0_double":
            raise Failure(f"{events[0]} after the double press: {event_state}")
        ok(f"the recorded double press ran the automation once (counter 1); {events[0]}: event_type BTN_0_double")

        # Wear: BTN_2's press at 18 s bounces (up 4 ms after, down again 4 ms later); the
        # button debounce drops both edges, and the pad's BTN_2 wear sensor (diagnostic) counts
        # them; BTN_0's never bounced.
        wear = {e.rsplit("_", 2)[-2]: e for e in pad_entities if e.startswith("sensor.") and e.endswith("_chatter")}
        if sorted(wear) != ["0", "1", "2", "3"]:
            raise Failure(f"one wear sensor per button of the pad, got {sorted(wear)}")
        categories = {pad_entities[e].get("entity_category") for e in wear.values()}
        if categories != {"diagnostic"}:
            raise Failure(f"wear sensors' entity_category: {categories}")
        await asyncio.sleep(max(0.0, t0 + 19.0 - time.monotonic()))
        worn, sound = await ha.state(wear["2"]), await ha.state(wear["0"])
        if worn != "2" or sound != "0":
            raise Failure(f"wear sensors after BTN_2's bounce: {wear['2']} {worn} (expected 2), {wear['0']} {sound} (expected 0)")
        ok(f"wear: {wear['2']} 2 after BTN_2's bounce at 18 s, {wear['0']} 0; entity_category diagnostic")

        # The knob's three clockwise detents at 16.00–16.04 s: a step of 1 at once and one of 2
        # at the window's end, both through the rotate_right trigger (3 in all); the detent back
        # at 17 s is the event entity's last event, rotate_left of 1.
        turned = await ha.state("counter.evflow_knob_right")
        knob_state = await ha.rest("GET", f"/api/states/{knob_event[0]}")
        if turned != "3":
            raise Failure(f"counter.evflow_knob_right after three detents: {turned}, expected 3")
        if knob_state["attributes"].get("event_type") != "REL_DIAL_rotate_left" or knob_state["attributes"].get("count") != 1:
            raise Failure(f"{knob_event[0]} after the turn back: {knob_state}")
        ok(f"knob: three detents made rotate_right steps summing to 3 (counter 3); {knob_event[0]}: REL_DIAL_rotate_left, count 1")

        # A looping replay removes every device at the end of a pass and adds it again, as a
        # Bluetooth device that sleeps and wakes: the bridge clears the device's discovery
        # topics, then publishes them again. Home Assistant must see the same devices again.
        before = {i: d["id"] for i, d in devices.items()}
        async def lid_entity_gone():
            return True if lid_sensor[0] not in await ha.entities_of(lid["id"]) else None
        await wait_for("the lid's entity removed at the end of the replay's pass (20.1 s)", lid_entity_gone, 40)
        async def back():
            now = await ha.evflow_devices()
            if len(now) != 4:
                return None
            lid_now = next(d for d in now.values() if d["name"] == lid["name"])
            return now if lid_sensor[0] in await ha.entities_of(lid_now["id"]) else None
        again = await wait_for("the devices back after the replay's loop", back, 40)
        after = {i: d["id"] for i, d in again.items()}
        if after != before:
            raise Failure(f"device registry ids changed across a removal and re-add: {before} → {after}")
        ok("after the replay's loop removed and re-added every device: the same four device registry entries")
        async def battery_changed():
            state = await ha.rest("GET", f"/api/states/{battery_entity}")
            return state if state["state"] == "41" and state["attributes"].get("status") == "charging" else None
        await wait_for(f"{battery_entity} at the sysfs tree's new reading (41, charging)", battery_changed, 30)
        if battery_entity not in await ha.entities_of(pad["id"]):
            raise Failure(f"{battery_entity} is no longer on the pad's device after the loop")
        ok(f"{battery_entity}: 41 %, status charging, after the battery changed: the same entity on the same device")

        # The second pass's double press (15.33 s into it) reaches the same automation through
        # the re-published trigger: once more, and no single or other press counts.
        second_pass = time.monotonic()
        async def counted_twice():
            value = await ha.state("counter.evflow_double")
            if value not in ("1", "2"):
                raise Failure(f"counter.evflow_double in the second pass: {value}")
            return value if value == "2" else None
        await wait_for("the second pass's double press counted", counted_twice, 30)
        await asyncio.sleep(2.0)
        if await ha.state("counter.evflow_double") != "2":
            raise Failure("the counter moved again after the second double press")
        ok(f"the second pass's double press counted once more ({time.monotonic() - second_pass:.0f} s after the devices came back): counter 2")

        # Home Assistant logs a template it cannot render (an entity reading a payload that is
        # not the document its discovery config promised, e.g. a cleared state topic).
        with open(os.path.join(run.dir, "ha-core.log"), errors="replace") as f:
            errors = [l.strip() for l in f if "[homeassistant.helpers.template]" in l or "[homeassistant.components.mqtt" in l and " ERROR " in l]
        if errors:
            raise Failure(f"{len(errors)} template or MQTT errors in Home Assistant's log, first: {errors[0][:300]}")
        ok("Home Assistant's log: no template or MQTT error (every payload matched its entity's template)")

        if args.screenshot:
            await screenshot(args, run, ha, config, pad["id"])


async def screenshot(args, run, ha, config, device_id):
    """The pad's device page as headless chromium renders it (docs/img, for docs/mqtt.md).

    The frontend keeps its login in localStorage (`hassTokens`): a page on Home Assistant's
    own origin (/local/, the config's www directory) stores the check's tokens there and moves
    on to the device page; --virtual-time-budget lets that script and the page's rendering run
    before the picture is taken."""
    # The frontend shows onboarding's remaining steps until they are done (the check needed
    # only the user): location, analytics, integrations.
    await ha.rest("POST", "/api/onboarding/core_config")
    await ha.rest("POST", "/api/onboarding/analytics")
    await ha.rest("POST", "/api/onboarding/integration", {"client_id": ha.url + "/", "redirect_uri": ha.url + "/?auth_callback=1"})
    t = ha.tokens
    tokens = {"access_token": t["access_token"], "refresh_token": t["refresh_token"], "token_type": "Bearer",
              "expires_in": t["expires_in"], "hassUrl": ha.url, "clientId": ha.url + "/",
              "expires": int((time.time() + t["expires_in"]) * 1000)}
    with open(os.path.join(config, "www", "evflow-login.html"), "w") as f:
        f.write("<!doctype html><script>localStorage.setItem('hassTokens', " + json.dumps(json.dumps(tokens))
                + f");location.replace('/config/devices/device/{device_id}');</script>\n")
    out = os.path.abspath(args.screenshot)
    chromium = subprocess.run([args.chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                               "--window-size=1280,1100", "--virtual-time-budget=30000", f"--screenshot={out}",
                               ha.url + "/local/evflow-login.html"], capture_output=True, text=True, timeout=180)
    if chromium.returncode != 0 or not os.path.exists(out):
        raise Failure(f"chromium: exit {chromium.returncode}: {chromium.stderr[-500:]}")
    ok(f"screenshot of the pad's device page: {out} ({os.path.getsize(out)} bytes)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", required=True, help="directory of evflowd and evflow-mqtt")
    parser.add_argument("--hass", required=True, help="the hass executable")
    parser.add_argument("--start-timeout", type=float, default=300, help="seconds Home Assistant may take to start")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, HA's config)")
    parser.add_argument("--screenshot", help="also load Home Assistant's frontend and save a picture of the pad's device page here (PNG)")
    parser.add_argument("--chromium", default="chromium", help="the chromium executable for --screenshot")
    args = parser.parse_args()
    run = Run(args.keep)
    try:
        asyncio.run(check(args, run))
    except Failure as e:
        print(f"check-home-assistant: FAIL: {e}", file=sys.stderr)
        run.logs()
        run.stop()
        sys.exit(1)
    run.stop()
    print("check-home-assistant: all checks passed")


if __name__ == "__main__":
    main()
