#!/usr/bin/python3
"""evflowd's net.hadess.SensorProxy on a private system bus, read by Debian's monitor-sensor
(issue #29 item 3; docs/sensors.md, "The desktop's D-Bus API").

Run by scripts/check-sensor-proxy under umockdev-wrapper with Debian's /usr/bin/python3, like
scripts/sensor_testbed.py, whose device descriptions and in-place attribute writes it uses.

A dbus-daemon with its own configuration stands for the system bus: the system bus's default
policy (no names owned, no method calls, except where a policy file allows) plus evflow's
policy file, systemd/evflow-sensor-proxy.conf, as installed. evflowd runs with `sensor_proxy:
true` over a testbed with a polled accelerometer, light sensor and proximity sensor (its
PROXIMITY_NEAR_LEVEL set, as the hwdb sets it). Then:

  1. GetAll before any claim: the three Has… true, the light in lux; no sensor read (STATE).
  2. monitor-sensor (iio-sensor-proxy's client, unchanged) claims the three, as an
     unprivileged user when this runs as root (the policy lets anyone call): it prints each
     sensor's first value, then the changes the attributes are put through: a quarter turn
     (the same orientation evflow's own STATE gives), a light level, near and far.
  3. monitor-sensor is killed without releasing: its claims end with its bus name and the
     three sensors stop being read.
  4. A sensor removed: its Has… turns false.
  5. The properties cannot be set; a client cannot take the name.

  sensor_proxy_check.py BINDIR REPO
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
PROX = '/devices/platform/prox.0/iio:device2'
NAME = 'net.hadess.SensorProxy'

BUS_CONFIG = '''<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <listen>unix:path=%(work)s/system_bus_socket</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
  </policy>
  <include>%(policy)s</include>
</busconfig>
'''


def sensors():
    accel = tb.describe(ACCEL, [('name', 'accel_3d'), ('in_accel_x_raw', '0'), ('in_accel_y_raw', '981'),
                                ('in_accel_z_raw', '0'), ('in_accel_scale', '0.01')],
                        [('ID_PATH', 'platform-accel.0'), ('IIO_SENSOR_PROXY_TYPE', 'iio-poll-accel')])
    light = tb.describe(LIGHT, [('name', 'als'), ('in_illuminance_raw', '200'), ('in_illuminance_scale', '0.5')],
                        [('ID_PATH', 'platform-als.0'), ('IIO_SENSOR_PROXY_TYPE', 'iio-poll-als')])
    prox = tb.describe(PROX, [('name', 'prox'), ('in_proximity_raw', '10')],
                       [('ID_PATH', 'platform-prox.0'), ('IIO_SENSOR_PROXY_TYPE', 'iio-poll-proximity'),
                        ('PROXIMITY_NEAR_LEVEL', '100')])
    return accel, light, prox


def eventually(predicate, what, seconds=10):
    deadline = time.monotonic() + seconds
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError('no %s within %d s' % (what, seconds))
        time.sleep(0.05)


def main(bin_dir, repo):
    testbed = UMockdev.Testbed.new()
    work = tempfile.mkdtemp(prefix='evflow-sensor-proxy-')
    os.chmod(work, 0o755)
    with open(work + '/bus.conf', 'w') as f:
        f.write(BUS_CONFIG % {'work': work, 'policy': repo + '/systemd/evflow-sensor-proxy.conf'})
    with open(work + '/evflow.yaml', 'w') as f:
        f.write('sensor_proxy: true\n')
    bus = subprocess.Popen(['dbus-daemon', '--config-file=' + work + '/bus.conf', '--nofork', '--print-address=1'],
                           stdout=subprocess.PIPE, stderr=open(work + '/dbus-daemon.log', 'w'), text=True)
    address = bus.stdout.readline().strip()
    os.chmod(work + '/system_bus_socket', 0o777)
    client = dict(os.environ, DBUS_SYSTEM_BUS_ADDRESS=address)
    # The clients without umockdev's preload (umockdev-wrapper's, inherited): busctl reads
    # /proc and /sys for what it prints.
    plain = {k: v for k, v in client.items() if k not in ('LD_PRELOAD', 'UMOCKDEV_DIR')}
    sock = work + '/evflowd.sock'
    log = open(work + '/evflowd.log', 'w')
    daemon = subprocess.Popen([bin_dir + '/evflowd', '--socket', sock, '--config', work + '/evflow.yaml'],
                              env=dict(client, UMOCKDEV_DIR=testbed.get_root_dir(), LD_PRELOAD='libumockdev-preload.so.0'),
                              stderr=log)
    monitor = None

    def busctl(*args, check=True):
        r = subprocess.run(['busctl', '--address=' + address] + list(args), capture_output=True, text=True, timeout=10,
                           env=plain)
        if check and r.returncode != 0:
            raise AssertionError('busctl %s: %s' % (' '.join(args), r.stderr.strip()))
        return r

    def prop(name):
        return busctl('get-property', NAME, '/net/hadess/SensorProxy', NAME, name).stdout.strip()

    def ctl(*args):
        return subprocess.run([bin_dir + '/evflowctl'] + list(args) + ['--socket', sock],
                              capture_output=True, text=True, timeout=10).stdout

    def read_now(sensor):
        return re.search(r'^read now: +(yes|no)', ctl('state', sensor), re.M).group(1) if 'read now' in ctl('state', sensor) else None

    try:
        eventually(lambda: os.path.exists(sock), 'evflowd socket', 20)
        for description in sensors():
            tb.plug(testbed, description)
        eventually(lambda: all(' %s ' % n in ctl('devices') for n in ('accel_3d', 'als', 'prox')), 'sensors in DEVICES')
        eventually(lambda: busctl('status', NAME, check=False).returncode == 0, 'evflowd owning ' + NAME)
        eventually(lambda: prop('HasProximity') == 'b true', 'HasProximity true')
        values = {n: prop(n) for n in ('HasAccelerometer', 'HasAmbientLight', 'LightLevelUnit', 'AccelerometerOrientation')}
        assert values == {'HasAccelerometer': 'b true', 'HasAmbientLight': 'b true', 'LightLevelUnit': 's "lux"',
                          'AccelerometerOrientation': 's "undefined"'}, values
        for sensor in ('accel_3d', 'als', 'prox'):
            assert read_now(sensor) == 'no', (sensor, ctl('state', sensor))
        print('check-sensor-proxy: evflowd owns %s (through evflow\'s policy); the three sensors present, none read before a claim' % NAME)

        # monitor-sensor as nobody when root: the policy lets any user call.
        user = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] if os.getuid() == 0 else []
        monitor = subprocess.Popen(user + ['stdbuf', '-oL', 'monitor-sensor'], env=plain,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        lines = []
        threading.Thread(target=lambda: lines.extend(l.rstrip('\n') for l in monitor.stdout), daemon=True).start()

        def seen(pattern):
            return next((m for m in (re.search(pattern, l) for l in list(lines)) if m), None)

        def expect(pattern, what):
            try:
                return eventually(lambda: seen(pattern), what)
            except AssertionError:
                raise AssertionError('monitor-sensor: no %s; it printed:\n%s\nevflowd: %s'
                                     % (what, '\n'.join(lines), open(work + '/evflowd.log').read()[-2000:]))

        # Its first report is of the properties before its claims (as with iio-sensor-proxy:
        # nothing read yet, undefined and 0 lx); the first readings follow as changes.
        expect(r'=== Has accelerometer \(orientation: undefined\)', 'accelerometer')
        expect(r'=== Has ambient light sensor \(value: 0\.0+, unit: lux\)', 'light sensor')
        expect(r'=== Has proximity sensor \(near: 0\)', 'proximity sensor, far')
        first = expect(r'Accelerometer orientation changed: ([a-z-]+)', 'first orientation').group(1)
        expect(r'Light changed: 100\.0+ \(lux\)', 'first light level (100 lx)')
        for sensor in ('accel_3d', 'als', 'prox'):
            eventually(lambda: read_now(sensor) == 'yes', sensor + ' read while claimed')
        upright = eventually(lambda: re.search(r'^orientation: (\S+)', ctl('state', 'accel_3d'), re.M), 'evflow orientation')
        assert first in ('normal', 'bottom-up') and first == upright.group(1), (first, upright.group(1))
        print('check-sensor-proxy: monitor-sensor (as %s) claims all three: orientation %s (as evflow\'s STATE), 100 lx, far'
              % ('nobody' if user else 'this user', first))

        # A quarter turn: gravity along x.
        for axis, value in (('y', '0'), ('x', '981')):
            tb.change(testbed, '/sys' + ACCEL, 'in_accel_%s_raw' % axis, value)
        turned = expect(r'Accelerometer orientation changed: ((?:left|right)-up)', 'orientation change').group(1)
        state = eventually(lambda: re.search(r'^orientation: (\S+)', ctl('state', 'accel_3d'), re.M), 'evflow orientation')
        assert turned == state.group(1), (turned, state.group(1))
        tb.change(testbed, '/sys' + LIGHT, 'in_illuminance_raw', '1000')
        expect(r'Light changed: 500\.0+ \(lux\)', 'light change to 500 lx')
        tb.change(testbed, '/sys' + PROX, 'in_proximity_raw', '150')
        expect(r'Proximity value changed: 1', 'near')
        tb.change(testbed, '/sys' + PROX, 'in_proximity_raw', '20')
        expect(r'Proximity value changed: 0', 'far again')
        print('check-sensor-proxy: monitor-sensor follows the testbed: %s after a quarter turn, 500 lx, near, far' % turned)

        monitor.kill()
        monitor.wait()
        monitor = None
        for sensor in ('accel_3d', 'als', 'prox'):
            eventually(lambda: read_now(sensor) == 'no', sensor + ' no longer read after monitor-sensor died', 5)
        assert 'left the bus; its claims ended' in open(work + '/evflowd.log').read()
        print('check-sensor-proxy: monitor-sensor killed without releasing: its claims ended with its bus name, nothing is read')

        testbed.uevent('/sys' + PROX, 'remove')
        testbed.remove_device('/sys' + PROX)
        eventually(lambda: prop('HasProximity') == 'b false', 'HasProximity false after the removal')
        assert prop('HasAmbientLight') == 'b true'
        print('check-sensor-proxy: a removed sensor: HasProximity false, the others stay')

        r = busctl('set-property', NAME, '/net/hadess/SensorProxy', NAME, 'LightLevel', 'd', '1', check=False)
        assert r.returncode != 0 and 'read-only' in r.stderr, r.stderr
        r = subprocess.run(user + ['/usr/bin/python3', '-c', 'import dbus, sys; b = dbus.bus.BusConnection(sys.argv[1]); '
                                   'print(b.request_name("%s", 4))' % NAME, address], capture_output=True, text=True, env=plain)
        assert r.returncode != 0 and 'AccessDenied' in r.stderr, (r.stdout, r.stderr[-500:])
        print('check-sensor-proxy: the properties are read-only; another user cannot take the name')
    finally:
        if monitor:
            monitor.kill()
            monitor.wait()
        daemon.terminate()
        code = daemon.wait(timeout=20)
        log.close()
        bus.terminate()
        bus.wait()
    if code != 0:
        raise AssertionError('evflowd exited %d: %s' % (code, open(work + '/evflowd.log').read()[-1500:]))
    print('check-sensor-proxy: OK')


if __name__ == '__main__':
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
    try:
        main(sys.argv[1], sys.argv[2])
    except AssertionError as e:
        print('check-sensor-proxy: FAIL: %s' % e, file=sys.stderr)
        sys.exit(1)
