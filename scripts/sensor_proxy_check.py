#!/usr/bin/python3
"""evflowd's net.hadess.SensorProxy on a private system bus, read by Debian's monitor-sensor
(issue #29 item 3; docs/sensors.md, "The desktop's D-Bus API").

Run by scripts/check-sensor-proxy under umockdev-wrapper with Debian's /usr/bin/python3. The
testbed, the two buses and the monitor-sensors are scripts/sensor_buses.py's (shared with
scripts/sensor_compare.py, which plays the fixtures' sequences through the same setup).

A dbus-daemon with its own configuration stands for the system bus: the system bus's default
policy (no names owned, no method calls, except where a policy file allows) plus evflow's
policy file, systemd/evflow-sensor-proxy.conf, as installed. evflowd runs with `sensor_proxy:
true` over a testbed with a polled accelerometer, light sensor and proximity sensor (its
PROXIMITY_NEAR_LEVEL set, as the hwdb sets it), and Debian's iio-sensor-proxy beside it on the
same testbed, on a second such bus with its package's policy file. Then:

  1. Both: the same interface (busctl introspect: methods, property types and flags) and the
     same properties before any claim; evflowd reads no sensor (STATE).
  2. A monitor-sensor (iio-sensor-proxy's client, unchanged) on each bus claims the three, as
     an unprivileged user when this runs as root (the policies let anyone call): both print
     the sensors, then the same changes as the attributes go through a quarter turn, a light
     level, near and far (evflowd's orientation is also its own STATE's).
  3. A sensor removed while claimed: both monitor-sensors print it gone (PropertiesChanged).
     evflowd's monitor-sensor is killed without releasing: its claims end with its bus name
     and the sensors stop being read; so do those of clients that claim and leave at once;
     with no claim left evflowd does not wake up.
  4. Both take a claim of a kind with no sensor and refuse an unknown method.
  5. evflowd's properties cannot be set; another user cannot take its name (as root only: a
     user that is not root stands in the buses' policies for root and evflow, the owners).

  sensor_proxy_check.py BINDIR REPO
"""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sensor_buses as sb  # noqa: E402
from sensor_buses import ACCEL, LIGHT, NAME, PROX, eventually  # noqa: E402


def main(bin_dir, repo):
    with sb.SideBySide(bin_dir, repo, 'evflow-sensor-proxy-') as s:
        check(s)
    print('check-sensor-proxy: OK')


def check(s):
    bus, proxy_bus, ctl = s.bus, s.proxy_bus, s.ctl

    def read_now(sensor):
        m = re.search(r'^read now: +(yes|no)', ctl('state', sensor), re.M)
        return m and m.group(1)

    def orientation():
        return eventually(lambda: re.search(r'^orientation: (\S+)', ctl('state', 'accel_3d'), re.M), 'evflow orientation').group(1)

    # Upright (+g along y, as given to sb.accelerometer), 100 lx, far.
    s.plug([sb.accelerometer(0, 981, 0, 0.01), sb.light(200, 0.5), sb.proximity(10, 100)], ('accel_3d', 'als', 'prox'))
    s.start_proxy('HasProximity')
    before = [{n: b.prop(n) for n in ('HasAccelerometer', 'AccelerometerOrientation', 'HasAmbientLight', 'LightLevelUnit',
                                      'LightLevel', 'ProximityNear')} for b in (bus, proxy_bus)]
    assert before[0] == before[1] == {'HasAccelerometer': 'b true', 'AccelerometerOrientation': 's "undefined"',
                                      'HasAmbientLight': 'b true', 'LightLevelUnit': 's "lux"', 'LightLevel': 'd 0',
                                      'ProximityNear': 'b false'}, before
    assert bus.interface() == proxy_bus.interface(), (bus.interface(), proxy_bus.interface())
    for sensor in ('accel_3d', 'als', 'prox'):
        assert read_now(sensor) == 'no', (sensor, ctl('state', sensor))
    print('check-sensor-proxy: evflowd owns %s (through evflow\'s policy), iio-sensor-proxy beside it on a bus of its own; '
          'the same interface (methods, property types) and the same properties before a claim; nothing read' % NAME)

    monitors = s.start_monitors()
    for monitor in monitors:
        # Its first report is of the properties before its claims (nothing read yet:
        # undefined, 0 lx, far); the first readings follow as changes.
        monitor.expect(r'=== Has accelerometer \(orientation: undefined\)', 'accelerometer')
        monitor.expect(r'=== Has ambient light sensor \(value: 0\.0+, unit: lux\)', 'light sensor')
        monitor.expect(r'=== Has proximity sensor \(near: 0\)', 'proximity sensor, far')
        monitor.expect(r'Accelerometer orientation changed: normal', 'first orientation')
        monitor.expect(r'Light changed: 100\.0+ \(lux\)', 'first light level (100 lx)')
    for sensor in ('accel_3d', 'als', 'prox'):
        eventually(lambda: read_now(sensor) == 'yes', sensor + ' read while claimed')
    assert orientation() == 'normal'
    print('check-sensor-proxy: monitor-sensor (as %s) claims all three from each: orientation normal (evflow\'s STATE too), '
          '100 lx, far' % ('nobody' if sb.AS_NOBODY else 'this user'))

    # A quarter turn (gravity along x), a brighter light, something near, then far again.
    for axis, value in (('y', '0'), ('x', '981')):
        s.change(ACCEL, 'in_accel_%s_raw' % axis, value)
    for monitor in monitors:
        monitor.expect(r'Accelerometer orientation changed: right-up', 'orientation change to right-up')
    assert orientation() == 'right-up'
    s.change(LIGHT, 'in_illuminance_raw', '1000')
    for monitor in monitors:
        monitor.expect(r'Light changed: 500\.0+ \(lux\)', 'light change to 500 lx')
    s.change(PROX, 'in_proximity_raw', '150')
    for monitor in monitors:
        monitor.expect(r'Proximity value changed: 1', 'near')
    s.change(PROX, 'in_proximity_raw', '20')
    for monitor in monitors:
        monitor.expect(r'Proximity value changed: 0', 'far again')
    time.sleep(1.0)   # a last poll of iio-sensor-proxy's
    changes = [m.changes() for m in monitors]
    assert changes[0] == changes[1], 'evflowd %s, iio-sensor-proxy %s' % tuple(changes)
    print('check-sensor-proxy: both follow the testbed with the same PropertiesChanged, as monitor-sensor prints them: %s' % changes[0])

    # A sensor removed while claimed: its Has… false, in a PropertiesChanged monitor-sensor prints.
    s.testbed.uevent('/sys' + PROX, 'remove')
    s.testbed.remove_device('/sys' + PROX)
    for monitor in monitors:
        monitor.expect(r'--- Proximity sensor disappeared', 'the proximity sensor gone')
    for b, who in s.buses():
        assert b.prop('HasProximity') == 'b false' and b.prop('HasAmbientLight') == 'b true', who
    print('check-sensor-proxy: a sensor removed while claimed: both monitor-sensors print it gone, the others stay')

    log = s.work + '/evflowd.log'
    monitors[0].kill()
    for sensor in ('accel_3d', 'als'):
        eventually(lambda: read_now(sensor) == 'no', sensor + ' no longer read after monitor-sensor died', 5)
    assert 'left the bus; its claims ended' in open(log).read()
    print('check-sensor-proxy: monitor-sensor killed without releasing: its claims ended with its bus name, nothing is read')
    # Clients that send a claim without waiting for its reply and leave at once: gone before
    # evflowd watches their names, which its GetNameOwner after the match tells.
    quick = ('import dbus, dbus.lowlevel, sys\nfor _ in range(5):\n    b = dbus.bus.BusConnection(sys.argv[1])\n'
             '    m = dbus.lowlevel.MethodCallMessage("%s", "/net/hadess/SensorProxy", "%s", "ClaimLight")\n'
             '    m.set_no_reply(True)\n    b.send_message(m)\n    b.flush()\n    b.close()\n' % (NAME, NAME))
    r = subprocess.run(['/usr/bin/python3', '-c', quick, bus.address], capture_output=True, text=True, env=bus.env)
    assert r.returncode == 0, r.stderr[-500:]
    eventually(lambda: open(log).read().count('left the bus; its claims ended') == 6, '5 more departures', 5)
    eventually(lambda: read_now('als') == 'no', 'als no longer read after 5 clients claimed it and left at once', 5)
    print('check-sensor-proxy: 5 clients that claim the light and leave at once, gone before evflowd watches them: '
          'their claims end too')
    # Unclaimed, the service costs no wake-up (docs/benchmarks.md, I1): no timer, no
    # signal from other connections (iio-sensor-proxy's monitor-sensor is on the other bus).
    idle = subprocess.run([os.path.join(os.path.dirname(__file__), 'idle-cost'), '--pid', str(s.daemon.pid),
                           '--seconds', '3', '--max', '3'], capture_output=True, text=True)
    assert idle.returncode == 0, idle.stdout + idle.stderr
    print('check-sensor-proxy: no claim, no wake-ups: %s' % idle.stdout.strip().splitlines()[-1])

    # A claim of a kind with no sensor is taken (it is read once one comes); an unknown method is refused.
    for method, ok in (('ClaimProximity', True), ('ReleaseProximity', True), ('ClaimGyroscope', False)):
        calls = [b.busctl('call', NAME, sb.OBJECT, NAME, method, check=False) for b in (bus, proxy_bus)]
        assert [c.returncode == 0 for c in calls] == [ok, ok], (method, [(c.returncode, c.stderr) for c in calls])
    print('check-sensor-proxy: ClaimProximity without a proximity sensor is taken, an unknown method refused (both)')

    r = bus.busctl('set-property', NAME, sb.OBJECT, NAME, 'LightLevel', 'd', '1', check=False)
    assert r.returncode != 0 and 'read-only' in r.stderr, r.stderr
    if sb.AS_NOBODY:
        r = subprocess.run(sb.AS_NOBODY + ['/usr/bin/python3', '-c', 'import dbus, sys; b = dbus.bus.BusConnection(sys.argv[1]); '
                                           'print(b.request_name("%s", 4))' % NAME, bus.address],
                           capture_output=True, text=True, env=bus.env)
        assert r.returncode != 0 and 'AccessDenied' in r.stderr, (r.stdout, r.stderr[-500:])
        print('check-sensor-proxy: the properties are read-only; another user cannot take the name')
    else:
        print('check-sensor-proxy: the properties are read-only (not root: whether another user can take the name is not checked)')


if __name__ == '__main__':
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    try:
        main(sys.argv[1], sys.argv[2])
    except AssertionError as e:
        print('check-sensor-proxy: FAIL: %s' % e, file=sys.stderr)
        sys.exit(1)
