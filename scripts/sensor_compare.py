#!/usr/bin/python3
"""evflowd and iio-sensor-proxy side by side on one umockdev testbed (issue #22, item 7).

Run by scripts/compare-iio-sensor-proxy, under umockdev-wrapper with Debian's /usr/bin/python3
(python3-gi and umockdev's typelib), like scripts/sensor_testbed.py, whose device descriptions
and in-place attribute writes it uses.

One testbed holds a polled accelerometer and a polled light sensor. Both daemons run at once
on it, each reading the same sysfs attributes on its own schedule: evflowd (built-in filters,
watched with `evflowctl watch --sensor accel --sensor illuminance`) and iio-sensor-proxy
(/usr/sbin/iio-sensor-proxy on a private D-Bus bus standing for the system bus, watched with
`monitor-sensor`, which claims both sensors and prints each property change). This script
then plays the two sequences of Tests/Fixtures/sensors/ into the attributes at their own
times, both at once: each value stays in its attribute until the next one, as a kernel
attribute holds the sensor's last conversion.

  accel-45deg.sensors         as recorded (36 s at 50 Hz)
  light-phantom-zero.sensors  with the 60 s of suspend shortened to 2 s (the attribute keeps
                              its last value meanwhile): the resume's 0 lx at 12 s, held
                              0.7 s, the lamp off at 22 s, the curtains at 37–38.5 s

Every line either client prints is stamped on arrival (CLOCK_MONOTONIC), so a latency is from
the attribute write that completes a true change to the line that publishes it, through each
daemon's own client path. The true changes are the generator's model
(scripts/gen-sensor-fixtures.py); a publication that is not the first one of a true change's
new value is counted as a flip (orientation) or an extra change (light).

  sensor_compare.py BINDIR FIXTURES_DIR    prints the table; exits 1 when evflowd misses a true
                                           change or publishes a flip, the phantom or the shadow
"""
import os
import re
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sensor_testbed as tb  # noqa: E402
from gi.repository import UMockdev  # noqa: E402

ACCEL = '/devices/platform/accel.0/iio:device0'
LIGHT = '/devices/platform/als.0/iio:device1'
ACCEL_SCALE = 0.001   # m/s² per count
LIGHT_SCALE = 0.01    # lx per count
SUSPEND = (10.0, 70.0)   # the fixture's suspend, played as SHORT_SUSPEND seconds
SHORT_SUSPEND = 2.0
SHIFT = SUSPEND[1] - SUSPEND[0] - SHORT_SUSPEND

# The model's true changes, in played time: (new value, the change starts, it is complete).
ORIENTATION_CHANGES = [('right-up', 14.6, 15.2), ('normal', 27.0, 27.6), ('face-up', 31.0, 32.0)]
LIGHT_CHANGES = [(12.0, 80.0 - SHIFT, 80.0 - SHIFT), (900.0, 95.0 - SHIFT, 96.5 - SHIFT)]
PHANTOM = 70.0 - SHIFT          # 0 lx from here for 0.7 s
SHADOW = (6.0, 6.4)             # 40 lx: a hand over the sensor
LIGHT_BAND = 0.25               # a publication within 25 % of a new level is that level


def accelerometer():
    """A polled accelerometer in mm/s² counts, typed for iio-sensor-proxy as its udev rule
    would. The fixture's axes are the screen's, with +g along the axis pointing up; both
    daemons read gravity (pointing down: with the identity an upright device reading +g on y
    is bottom-up), so the negating matrix is set in the udev property both read before sysfs
    (ACCEL_MOUNT_MATRIX, from the hwdb on a real machine): both daemons then see the same
    physical orientations."""
    return tb.describe(ACCEL, [('name', 'accel_3d'), ('in_accel_x_raw', '0'), ('in_accel_y_raw', '9807'),
                               ('in_accel_z_raw', '0'), ('in_accel_scale', str(ACCEL_SCALE)),
                               ('in_accel_mount_matrix', '1, 0, 0; 0, 1, 0; 0, 0, 1')],
                       [('ID_PATH', 'platform-accel.0'), ('IIO_SENSOR_PROXY_TYPE', 'iio-poll-accel'),
                        ('ACCEL_MOUNT_MATRIX', '-1, 0, 0; 0, -1, 0; 0, 0, -1')])


def light_sensor():
    """A polled ambient-light sensor in 0.01 lx counts."""
    return tb.describe(LIGHT, [('name', 'als'), ('in_illuminance_raw', '0'), ('in_illuminance_scale', str(LIGHT_SCALE))],
                       [('ID_PATH', 'platform-als.0'), ('IIO_SENSOR_PROXY_TYPE', 'iio-poll-als')])


def recording(path):
    """[(time, [values])] of a one-sensor recording's V: lines."""
    rows = []
    for line in open(path):
        if line.startswith('V: '):
            parts = line.split()
            rows.append((float(parts[1]), [float(v) for v in parts[3:]]))
    return rows


def schedule(fixtures):
    """[(time, syspath, {attribute: value})], both sequences merged in time order."""
    writes = []
    for t, (x, y, z) in recording(fixtures + '/accel-45deg.sensors'):
        writes.append((t, ACCEL, {'in_accel_%s_raw' % axis: str(round(v / ACCEL_SCALE))
                                  for axis, v in zip('xyz', (x, y, z))}))
    for t, (lux,) in recording(fixtures + '/light-phantom-zero.sensors'):
        writes.append((t - SHIFT if t >= SUSPEND[1] else t, LIGHT, {'in_illuminance_raw': str(round(lux / LIGHT_SCALE))}))
    return sorted(writes, key=lambda w: w[0])


class Lines:
    """A child's stdout lines, each stamped with CLOCK_MONOTONIC on arrival (a reader thread)."""

    def __init__(self, args, env=None):
        self.process = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, bufsize=1)
        self.lines = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.append((time.monotonic(), line.rstrip('\n')))

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.thread.join(timeout=5)


def evflow_publications(lines):
    """([(t, orientation)], [(t, lux)]) from `evflowctl watch` lines: an orientation is
    published when it differs from the previous one; every filtered light sample is a level."""
    orientations, levels = [], []
    for t, line in lines:
        m = re.search(r'  orientation (\S+)$', line)
        if m and (not orientations or orientations[-1][1] != m.group(1)):
            orientations.append((t, m.group(1)))
        m = re.search(r'  illuminance ([-0-9.e]+) lx$', line)
        if m:
            levels.append((t, float(m.group(1))))
    return orientations, levels


def proxy_publications(lines):
    """The same from monitor-sensor's lines: its first report of each sensor, then each
    "changed" line (one per PropertiesChanged of AccelerometerOrientation / LightLevel)."""
    orientations, levels = [], []
    for t, line in lines:
        m = re.search(r'(?:Has accelerometer \(orientation: |Accelerometer orientation changed: )([a-z-]+)', line)
        if m and m.group(1) != 'undefined':
            orientations.append((t, m.group(1)))
        m = re.search(r'(?:Has ambient light sensor \(value: |Light changed: )([-0-9.e]+)', line)
        if m:
            levels.append((t, float(m.group(1))))
    return orientations, levels


def score(publications, changes, same, t0):
    """(published changes after t0, [latency per true change], unmatched publications, the
    publications after t0 in played time). A true change is seen when, after it starts and
    before the next one does, the published value first is its new one: its latency is from
    the change's completion (negative: published while the change was under way); "missed"
    when that never happens, "early" when the value was already published at the start (by
    an earlier flip, which is not a detection). Every other publication is unmatched."""
    before = [v for t, v in publications if t < t0]
    after = [(t - t0, v) for t, v in publications if t >= t0]
    latencies, used = [], set()
    for i, (value, start, end) in enumerate(changes):
        limit = changes[i + 1][1] if i + 1 < len(changes) else float('inf')
        current = ([v for t, v in after if t < start] or before or [None])[-1]
        if current is not None and same(current, value):
            latencies.append('early')
            continue
        hit = next((k for k, (t, v) in enumerate(after) if start <= t < limit and same(v, value)), None)
        latencies.append('missed' if hit is None else after[hit][0] - end)
        if hit is not None:
            used.add(hit)
    return len(after), latencies, len(after) - len(used), after


def main(bin_dir, fixtures):
    testbed = UMockdev.Testbed.new()
    root = testbed.get_root_dir()
    work = tempfile.mkdtemp(prefix='evflow-compare-')
    sock = work + '/evflowd.sock'
    preload = dict(os.environ, UMOCKDEV_DIR=root, LD_PRELOAD='libumockdev-preload.so.0')
    children = []
    bus = subprocess.Popen(['dbus-daemon', '--session', '--nofork', '--print-address=1'],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        address = bus.stdout.readline().strip()
        # iio-sensor-proxy and monitor-sensor talk on the "system" bus: this private one.
        system_bus = dict(preload, DBUS_SYSTEM_BUS_ADDRESS=address)
        client_env = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address)
        evflowd = subprocess.Popen([bin_dir + '/evflowd', '--socket', sock], env=preload,
                                   stderr=open(work + '/evflowd.log', 'w'))
        children.append(evflowd)
        deadline = time.monotonic() + 20
        while not os.path.exists(sock):
            if time.monotonic() > deadline:
                raise AssertionError('evflowd: no socket within 20 s')
            time.sleep(0.05)
        # Plugged once evflowd's udev monitor listens (scripts/sensor_testbed.py, plug), before
        # iio-sensor-proxy starts: it finds them when it enumerates.
        tb.plug(testbed, accelerometer())
        tb.plug(testbed, light_sensor())
        first = schedule(fixtures)
        initial = {}
        for t, syspath, attributes in first:
            initial.setdefault(syspath, attributes)
        for syspath, attributes in initial.items():
            for attribute, value in attributes.items():
                tb.change(testbed, '/sys' + syspath, attribute, value)
        proxy = subprocess.Popen(['/usr/sbin/iio-sensor-proxy'], env=system_bus,
                                 stderr=open(work + '/iio-sensor-proxy.log', 'w'))
        children.append(proxy)
        time.sleep(1.0)
        monitor = Lines(['stdbuf', '-oL', 'monitor-sensor'], env=client_env)
        watch = Lines([bin_dir + '/evflowctl', 'watch', '--sensor', 'accel', '--sensor', 'illuminance', '--socket', sock])
        # Both clients must have each sensor's first value before the sequences start.
        deadline = time.monotonic() + 20
        while True:
            eo, el = evflow_publications(watch.lines)
            po, pl = proxy_publications(monitor.lines)
            if eo and el and po and pl:
                break
            if time.monotonic() > deadline:
                raise AssertionError('no first values within 20 s: evflowctl %s; monitor-sensor %s'
                                     % (watch.lines[-5:], monitor.lines[-5:]))
            time.sleep(0.05)
        time.sleep(1.0)
        t0 = time.monotonic()
        for t, syspath, attributes in first:
            delay = t0 + t - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            for attribute, value in attributes.items():
                tb.change(testbed, '/sys' + syspath, attribute, value)
        time.sleep(2.0)   # a last publication, at iio-sensor-proxy's pace
        monitor.stop()
        watch.stop()
        for name, lines in (('evflowctl-watch', watch.lines), ('monitor-sensor', monitor.lines)):
            with open('%s/%s.txt' % (work, name), 'w') as f:
                f.writelines('%+.3f %s\n' % (t - t0, line) for t, line in lines)
    finally:
        for child in reversed(children):
            child.terminate()
            try:
                child.wait(timeout=20)
            except subprocess.TimeoutExpired:
                child.kill()
        bus.terminate()
        bus.wait()

    def near(v, level):
        return abs(v - level) <= LIGHT_BAND * level

    rows, evflow_ok, failures = [], True, []
    for name, (orientations, levels) in [('evflowd', evflow_publications(watch.lines)),
                                         ('iio-sensor-proxy', proxy_publications(monitor.lines))]:
        o_count, o_latency, flips, _ = score(orientations, ORIENTATION_CHANGES, lambda a, b: a == b, t0)
        l_count, l_latency, extra, light_after = score(levels, LIGHT_CHANGES, near, t0)
        phantom = sum(1 for t, v in light_after if v < 1.0 and PHANTOM <= t < PHANTOM + 2.0)
        shadow = sum(1 for t, v in light_after if v < 100.0 and SHADOW[0] <= t < SHADOW[1] + 2.0)
        rows.append((name, o_count, o_latency, flips, l_count, l_latency, extra, phantom, shadow))
        if name == 'evflowd':
            failures = [what for what, bad in [('missed a true change', not all(isinstance(v, float) for v in o_latency + l_latency)),
                                               ('published a flip', flips > 0), ('published the phantom 0 lx', phantom > 0),
                                               ('published the shadow', shadow > 0)] if bad]
            evflow_ok = not failures

    def ms(latencies):
        return ', '.join(v if isinstance(v, str) else '%+d' % round(v * 1000) for v in latencies)

    print('| daemon | orientation changes published | true changes (3): latency ms | flips '
          '| light changes published | true changes (2): latency ms | other light changes | phantom 0 lx | shadow |')
    print('|---|---|---|---|---|---|---|---|---|')
    for name, o_count, o_latency, flips, l_count, l_latency, extra, phantom, shadow in rows:
        print('| %s | %d | %s | %d | %d | %s | %d | %d | %d |'
              % (name, o_count, ms(o_latency), flips, l_count, ms(l_latency), extra, phantom, shadow))
    if not evflow_ok:
        print('compare-iio-sensor-proxy: evflowd %s' % ', '.join(failures), file=sys.stderr)
    print('\nEach client\'s lines, at seconds from the start of the sequences: %s/{evflowctl-watch,monitor-sensor}.txt' % work)
    return evflow_ok


if __name__ == '__main__':
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    try:
        ok = main(sys.argv[1], sys.argv[2])
    except AssertionError as e:
        print('compare-iio-sensor-proxy: FAIL: %s' % e, file=sys.stderr)
        sys.exit(1)
    sys.exit(0 if ok else 1)
