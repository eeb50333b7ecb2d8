#!/usr/bin/python3
"""evflowd and iio-sensor-proxy side by side over D-Bus on one umockdev testbed (issue #22,
item 7; issue #29, item 3).

Run by scripts/compare-iio-sensor-proxy, under umockdev-wrapper with Debian's /usr/bin/python3.
The setup is scripts/sensor_buses.py's, the one scripts/check-sensor-proxy asserts the D-Bus
behaviour with: evflowd with `sensor_proxy: true` (its built-in filters) on a private system
bus, Debian's iio-sensor-proxy on another, both reading the same testbed, and Debian's
monitor-sensor on each bus (the same binary; it claims the three sensors and prints each
PropertiesChanged of AccelerometerOrientation, LightLevel and ProximityNear). What either
daemon published is counted from its monitor-sensor's lines alone.

The testbed holds a polled accelerometer, light sensor and proximity sensor. This script plays
the two sequences of Tests/Fixtures/sensors/ and one of its own into their attributes at their
own times, all at once: each value stays in its attribute until the next one, as a kernel
attribute holds the sensor's last conversion.

  accel-45deg.sensors         as recorded (36 s at 50 Hz)
  light-phantom-zero.sensors  with the 60 s of suspend shortened to 2 s (the attribute keeps
                              its last value meanwhile): the resume's 0 lx at 12 s, held
                              0.7 s, the lamp off at 22 s, the curtains at 37–38.5 s
  proximity (here)            5 Hz, 10 counts ± noise (far), a phone raised to the ear at
                              8–8.4 s (to 150; near level 100), taken away at 18–18.4 s

Every line is stamped on arrival (CLOCK_MONOTONIC), so a latency is from the attribute write
that completes a true change to the line that publishes it, through each daemon's D-Bus path
and the same client. The true changes are the generators' models (scripts/gen-sensor-fixtures.py
and PROXIMITY below). AccelerometerOrientation has no flat value, so the fixture's last change
(to face-up, 31–32 s) is none on D-Bus: both daemons keep the last upright orientation, and a
publication while the device lies flat counts as a flip. A publication that is not the first
one of a true change's new value is counted as a flip (orientation) or an extra change (light,
proximity).

  sensor_compare.py BINDIR REPO    prints the table; exits 1 when evflowd misses a true change,
                                   publishes a flip, the phantom, the shadow or an extra
                                   proximity change, or the two daemons' monitor-sensors
                                   differ in what they print before the sequences
"""
import os
import random
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sensor_buses as sb  # noqa: E402
from sensor_buses import ACCEL, LIGHT, PROX  # noqa: E402

ACCEL_SCALE = 0.001   # m/s² per count
LIGHT_SCALE = 0.01    # lx per count
NEAR_LEVEL = 100      # PROXIMITY_NEAR_LEVEL, in counts
SUSPEND = (10.0, 70.0)   # the fixture's suspend, played as SHORT_SUSPEND seconds
SHORT_SUSPEND = 2.0
SHIFT = SUSPEND[1] - SUSPEND[0] - SHORT_SUSPEND

# The model's true changes, in played time: (new value, the change starts, it is complete).
# face-up (31–32 s) has no D-Bus value (see the docstring).
ORIENTATION_CHANGES = [('right-up', 14.6, 15.2), ('normal', 27.0, 27.6)]
LIGHT_CHANGES = [(12.0, 80.0 - SHIFT, 80.0 - SHIFT), (900.0, 95.0 - SHIFT, 96.5 - SHIFT)]
PHANTOM = 70.0 - SHIFT          # 0 lx from here for 0.7 s
SHADOW = (6.0, 6.4)             # 40 lx: a hand over the sensor
LIGHT_BAND = 0.25               # a publication within 25 % of a new level is that level
# Proximity: far at 10 counts, near at 150, ramps of 0.4 s; noise σ 2 counts, seeded.
PROXIMITY = [(0.0, 10), (8.0, 10), (8.4, 150), (18.0, 150), (18.4, 10), (40.0, 10)]
PROXIMITY_CHANGES = [('1', 8.0, 8.4), ('0', 18.0, 18.4)]


def recording(path):
    """[(time, [values])] of a one-sensor recording's V: lines."""
    rows = []
    for line in open(path):
        if line.startswith('V: '):
            parts = line.split()
            rows.append((float(parts[1]), [float(v) for v in parts[3:]]))
    return rows


def proximity_sequence():
    """[(time, counts)] at 5 Hz: PROXIMITY's piecewise-linear level plus seeded noise."""
    noise = random.Random(29)
    rows = []
    for i in range(int(PROXIMITY[-1][0] * 5) + 1):
        t = i / 5
        for (t1, v1), (t2, v2) in zip(PROXIMITY, PROXIMITY[1:]):
            if t1 <= t <= t2:
                level = v1 + (v2 - v1) * (t - t1) / (t2 - t1)
                break
        rows.append((t, max(0, round(level + noise.gauss(0, 2)))))
    return rows


def schedule(fixtures):
    """[(time, syspath, {attribute: value})], the three sequences merged in time order."""
    writes = []
    for t, (x, y, z) in recording(fixtures + '/accel-45deg.sensors'):
        writes.append((t, ACCEL, {'in_accel_%s_raw' % axis: str(round(v / ACCEL_SCALE))
                                  for axis, v in zip('xyz', (x, y, z))}))
    for t, (lux,) in recording(fixtures + '/light-phantom-zero.sensors'):
        writes.append((t - SHIFT if t >= SUSPEND[1] else t, LIGHT, {'in_illuminance_raw': str(round(lux / LIGHT_SCALE))}))
    for t, counts in proximity_sequence():
        writes.append((t, PROX, {'in_proximity_raw': str(counts)}))
    return sorted(writes, key=lambda w: w[0])


def publications(stamped):
    """([(t, orientation)], [(t, lux)], [(t, '0'/'1')]) from monitor-sensor's lines: each
    "changed" line is one PropertiesChanged of that property. Its "===" lines are the
    properties before its claims (undefined, 0 lx, far), not readings."""
    orientations, levels, nearness = [], [], []
    for t, line in stamped:
        m = re.search(r'Accelerometer orientation changed: ([a-z-]+)', line)
        if m:
            orientations.append((t, m.group(1)))
        m = re.search(r'Light changed: ([-0-9.e]+)', line)
        if m:
            levels.append((t, float(m.group(1))))
        m = re.search(r'Proximity value changed: (\d)', line)
        if m:
            nearness.append((t, m.group(1)))
    return orientations, levels, nearness


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


def main(bin_dir, repo):
    writes = schedule(repo + '/Tests/Fixtures/sensors')
    initial = {}
    for t, syspath, attributes in writes:
        initial.setdefault(syspath, attributes)
    with sb.SideBySide(bin_dir, repo, 'evflow-compare-') as s:
        s.plug([sb.accelerometer(0, 9807, 0, ACCEL_SCALE), sb.light(0, LIGHT_SCALE), sb.proximity(0, NEAR_LEVEL)],
               ('accel_3d', 'als', 'prox'))
        # Each attribute holds its sequence's first value before either daemon reads it.
        for syspath, attributes in initial.items():
            for attribute, value in attributes.items():
                s.change(syspath, attribute, value)
        s.start_proxy('HasProximity')
        monitors = s.start_monitors()
        # Both clients must have the first orientation and light level (far is the value
        # before the claim: no change) before the sequences start.
        for monitor in monitors:
            monitor.expect(r'Accelerometer orientation changed: normal', 'first orientation', 20)
            monitor.expect(r'Light changed: ', 'first light level', 20)
        headers = [[l for l in m.lines if l.startswith('===')] for m in monitors]
        assert headers[0] == headers[1], 'monitor-sensor printed\n  evflowd: %s\n  iio-sensor-proxy: %s' % tuple(headers)
        time.sleep(1.0)
        t0 = time.monotonic()
        for t, syspath, attributes in writes:
            delay = t0 + t - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            for attribute, value in attributes.items():
                s.change(syspath, attribute, value)
        time.sleep(2.0)   # a last publication, at iio-sensor-proxy's pace
        final = [{n: b.prop(n) for n in ('AccelerometerOrientation', 'LightLevel', 'ProximityNear')} for b, _ in s.buses()]
        for monitor in monitors:
            monitor.kill()
        work = s.work
        for who, monitor in zip(('evflowd', 'iio-sensor-proxy'), monitors):
            with open('%s/monitor-sensor-%s.txt' % (work, who), 'w') as f:
                f.writelines('%+.3f %s\n' % (t - t0, line) for t, line in monitor.stamped)

    def near(v, level):
        return abs(v - level) <= LIGHT_BAND * level

    rows, failures = [], []
    for name, monitor in zip(('evflowd', 'iio-sensor-proxy'), monitors):
        orientations, levels, nearness = publications(monitor.stamped)
        o_count, o_latency, flips, _ = score(orientations, ORIENTATION_CHANGES, lambda a, b: a == b, t0)
        l_count, l_latency, extra, light_after = score(levels, LIGHT_CHANGES, near, t0)
        p_count, p_latency, p_extra, _ = score(nearness, PROXIMITY_CHANGES, lambda a, b: a == b, t0)
        phantom = sum(1 for t, v in light_after if v < 1.0 and PHANTOM <= t < PHANTOM + 2.0)
        shadow = sum(1 for t, v in light_after if v < 100.0 and SHADOW[0] <= t < SHADOW[1] + 2.0)
        rows.append((name, o_count, o_latency, flips, l_count, l_latency, extra, phantom, shadow, p_count, p_latency, p_extra))
        if name == 'evflowd':
            failures = [what for what, bad in [
                ('missed a true change', not all(isinstance(v, float) for v in o_latency + l_latency + p_latency)),
                ('published a flip', flips > 0), ('published the phantom 0 lx', phantom > 0),
                ('published the shadow', shadow > 0), ('published a proximity change that is none', p_extra > 0)] if bad]

    def ms(latencies):
        return ', '.join(v if isinstance(v, str) else '%+d' % round(v * 1000) for v in latencies)

    print('| daemon | orientation changes published | true changes (2): latency ms | flips '
          '| light changes published | true changes (2): latency ms | other light changes | phantom 0 lx | shadow '
          '| proximity changes published | true changes (2): latency ms | other proximity changes |')
    print('|---|---|---|---|---|---|---|---|---|---|---|---|')
    for name, o_count, o_latency, flips, l_count, l_latency, extra, phantom, shadow, p_count, p_latency, p_extra in rows:
        print('| %s | %d | %s | %d | %d | %s | %d | %d | %d | %d | %s | %d |'
              % (name, o_count, ms(o_latency), flips, l_count, ms(l_latency), extra, phantom, shadow,
                 p_count, ms(p_latency), p_extra))
    print('\nBoth monitor-sensors printed before the sequences: %s' % '; '.join(h.strip('= ') for h in headers[0]))
    print('Properties after the sequences: evflowd %s; iio-sensor-proxy %s' % tuple(final))
    print('Each monitor-sensor\'s lines, at seconds from the start of the sequences: %s/monitor-sensor-{evflowd,iio-sensor-proxy}.txt'
          % work)
    if failures:
        print('compare-iio-sensor-proxy: evflowd %s' % ', '.join(failures), file=sys.stderr)
    return not failures


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
