#!/usr/bin/python3
"""evflowd's net.hadess.SensorProxy on a private system bus, read by Debian's monitor-sensor
(issue #29 item 3; docs/sensors.md, "The desktop's D-Bus API").

Run by scripts/check-sensor-proxy under umockdev-wrapper with Debian's /usr/bin/python3, like
scripts/sensor_testbed.py, whose device descriptions and in-place attribute writes it uses.

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
%(extra)s</busconfig>
'''


# Not root (a CI user): the policies let root own the name (and evflowd's user, evflow);
# this user stands for them.
OWNER_STAND_IN = '' if os.getuid() == 0 else (
    '  <policy user="%s"><allow own="%s"/></policy>\n' % (__import__('pwd').getpwuid(os.getuid()).pw_name, NAME))


def sensors():
    accel = tb.describe(ACCEL, [('name', 'accel_3d'), ('in_accel_x_raw', '0'), ('in_accel_y_raw', '981'),
                                ('in_accel_z_raw', '0'), ('in_accel_scale', '0.01')],
                        [('ID_PATH', 'platform-accel.0'), ('IIO_SENSOR_PROXY_TYPE', 'iio-poll-accel'),
                         # iio-sensor-proxy's axis sign is the opposite of the one evflow's
                         # orientation rule has used (docs/sensors.md, "Side by side"): the
                         # hwdb's matrix, which it reads first, makes this upright for both.
                         ('ACCEL_MOUNT_MATRIX', '-1, 0, 0; 0, -1, 0; 0, 0, -1')])
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


class Bus:
    """A private dbus-daemon standing for the system bus: the default policy and one policy file."""

    def __init__(self, work, name, policy):
        with open('%s/%s.conf' % (work, name), 'w') as f:
            f.write(BUS_CONFIG % {'work': '%s/%s' % (work, name), 'policy': policy, 'extra': OWNER_STAND_IN})
        os.mkdir('%s/%s' % (work, name))
        os.chmod('%s/%s' % (work, name), 0o755)
        self.process = subprocess.Popen(['dbus-daemon', '--config-file=%s/%s.conf' % (work, name), '--nofork', '--print-address=1'],
                                        stdout=subprocess.PIPE, stderr=open('%s/%s.log' % (work, name), 'w'), text=True)
        self.address = self.process.stdout.readline().strip()
        os.chmod('%s/%s/system_bus_socket' % (work, name), 0o777)
        # Clients without umockdev's preload (umockdev-wrapper's, inherited): busctl reads /proc
        # and /sys for what it prints.
        self.env = {k: v for k, v in os.environ.items() if k not in ('LD_PRELOAD', 'UMOCKDEV_DIR')}
        self.env['DBUS_SYSTEM_BUS_ADDRESS'] = self.address

    def busctl(self, *args, check=True):
        r = subprocess.run(['busctl', '--address=' + self.address] + list(args), capture_output=True, text=True,
                           timeout=10, env=self.env)
        if check and r.returncode != 0:
            raise AssertionError('busctl %s: %s' % (' '.join(args), r.stderr.strip()))
        return r

    def prop(self, name):
        return self.busctl('get-property', NAME, '/net/hadess/SensorProxy', NAME, name).stdout.strip()

    def interface(self):
        """The interface's members as busctl lists them: name, kind, signature, flags."""
        out = self.busctl('introspect', NAME, '/net/hadess/SensorProxy', NAME).stdout
        return sorted(tuple(l.split()[i] for i in (0, 1, 2, -1)) for l in out.splitlines()[1:] if l.startswith('.'))

    def stop(self):
        self.process.terminate()
        self.process.wait()


class Monitor:
    """monitor-sensor on a bus (as nobody when root: the policies let any user call)."""

    def __init__(self, bus, who, log):
        self.who, self.log = who, log
        self.user = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] if os.getuid() == 0 else []
        self.process = subprocess.Popen(self.user + ['stdbuf', '-oL', 'monitor-sensor'], env=bus.env,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.lines = []
        threading.Thread(target=lambda: self.lines.extend(l.rstrip('\n') for l in self.process.stdout), daemon=True).start()

    def expect(self, pattern, what):
        def seen():
            return next((m for m in (re.search(pattern, l) for l in list(self.lines)) if m), None)
        try:
            return eventually(seen, what)
        except AssertionError:
            raise AssertionError('monitor-sensor on %s: no %s; it printed:\n%s\n%s: %s' % (
                self.who, what, '\n'.join(self.lines), self.who, open(self.log).read()[-2000:]))

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def changes(self):
        """The property changes it printed, per sensor: what a client sees of the D-Bus behaviour."""
        return {kind: [m.group(1) for m in (re.search(pattern, l) for l in self.lines) if m] for kind, pattern in (
            ('orientation', r'Accelerometer orientation changed: (\S+)'), ('light', r'Light changed: (\S+ \(\w+\))'),
            ('proximity', r'Proximity value changed: (\d)'))}


def main(bin_dir, repo):
    testbed = UMockdev.Testbed.new()
    work = tempfile.mkdtemp(prefix='evflow-sensor-proxy-')
    os.chmod(work, 0o755)
    with open(work + '/evflow.yaml', 'w') as f:
        f.write('sensor_proxy: true\n')
    preload = {'UMOCKDEV_DIR': testbed.get_root_dir(), 'LD_PRELOAD': 'libumockdev-preload.so.0'}
    bus = Bus(work, 'evflow-bus', repo + '/systemd/evflow-sensor-proxy.conf')
    sock = work + '/evflowd.sock'
    log = open(work + '/evflowd.log', 'w')
    daemon = subprocess.Popen([bin_dir + '/evflowd', '--socket', sock, '--config', work + '/evflow.yaml'],
                              env=dict(bus.env, **preload), stderr=log)
    # iio-sensor-proxy beside it, on a bus of its own with its package's policy.
    policy = next(p for p in ('/usr/share/dbus-1/system.d/net.hadess.SensorProxy.conf',
                              '/etc/dbus-1/system.d/net.hadess.SensorProxy.conf') if os.path.exists(p))
    proxy_bus = Bus(work, 'iio-bus', policy)
    proxy, monitors = None, []

    def ctl(*args):
        return subprocess.run([bin_dir + '/evflowctl'] + list(args) + ['--socket', sock],
                              capture_output=True, text=True, timeout=10).stdout

    def read_now(sensor):
        m = re.search(r'^read now: +(yes|no)', ctl('state', sensor), re.M)
        return m and m.group(1)

    def orientation():
        return eventually(lambda: re.search(r'^orientation: (\S+)', ctl('state', 'accel_3d'), re.M), 'evflow orientation').group(1)

    try:
        eventually(lambda: os.path.exists(sock), 'evflowd socket', 20)
        for description in sensors():
            tb.plug(testbed, description)
        eventually(lambda: all(' %s ' % n in ctl('devices') for n in ('accel_3d', 'als', 'prox')), 'sensors in DEVICES')
        proxy = subprocess.Popen(['/usr/sbin/iio-sensor-proxy'], env=dict(proxy_bus.env, **preload),
                                 stderr=open(work + '/iio-sensor-proxy.log', 'w'))
        for b, who in ((bus, 'evflowd'), (proxy_bus, 'iio-sensor-proxy')):
            eventually(lambda: b.busctl('status', NAME, check=False).returncode == 0, who + ' owning ' + NAME)
            eventually(lambda: b.prop('HasProximity') == 'b true', who + ': HasProximity true')
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

        monitors = [Monitor(bus, 'evflowd', work + '/evflowd.log'), Monitor(proxy_bus, 'iio-sensor-proxy', work + '/iio-sensor-proxy.log')]
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
              '100 lx, far' % ('nobody' if monitors[0].user else 'this user'))

        # A quarter turn (gravity along x), a brighter light, something near, then far again.
        for axis, value in (('y', '0'), ('x', '981')):
            tb.change(testbed, '/sys' + ACCEL, 'in_accel_%s_raw' % axis, value)
        for monitor in monitors:
            monitor.expect(r'Accelerometer orientation changed: right-up', 'orientation change to right-up')
        assert orientation() == 'right-up'
        tb.change(testbed, '/sys' + LIGHT, 'in_illuminance_raw', '1000')
        for monitor in monitors:
            monitor.expect(r'Light changed: 500\.0+ \(lux\)', 'light change to 500 lx')
        tb.change(testbed, '/sys' + PROX, 'in_proximity_raw', '150')
        for monitor in monitors:
            monitor.expect(r'Proximity value changed: 1', 'near')
        tb.change(testbed, '/sys' + PROX, 'in_proximity_raw', '20')
        for monitor in monitors:
            monitor.expect(r'Proximity value changed: 0', 'far again')
        time.sleep(1.0)   # a last poll of iio-sensor-proxy's
        changes = [m.changes() for m in monitors]
        assert changes[0] == changes[1], 'evflowd %s, iio-sensor-proxy %s' % tuple(changes)
        print('check-sensor-proxy: both follow the testbed with the same PropertiesChanged, as monitor-sensor prints them: %s' % changes[0])

        # A sensor removed while claimed: its Has… false, in a PropertiesChanged monitor-sensor prints.
        testbed.uevent('/sys' + PROX, 'remove')
        testbed.remove_device('/sys' + PROX)
        for monitor in monitors:
            monitor.expect(r'--- Proximity sensor disappeared', 'the proximity sensor gone')
        for b, who in ((bus, 'evflowd'), (proxy_bus, 'iio-sensor-proxy')):
            assert b.prop('HasProximity') == 'b false' and b.prop('HasAmbientLight') == 'b true', who
        print('check-sensor-proxy: a sensor removed while claimed: both monitor-sensors print it gone, the others stay')

        monitors[0].kill()
        for sensor in ('accel_3d', 'als'):
            eventually(lambda: read_now(sensor) == 'no', sensor + ' no longer read after monitor-sensor died', 5)
        assert 'left the bus; its claims ended' in open(work + '/evflowd.log').read()
        print('check-sensor-proxy: monitor-sensor killed without releasing: its claims ended with its bus name, nothing is read')
        # Clients that send a claim without waiting for its reply and leave at once: gone before
        # evflowd watches their names, which its GetNameOwner after the match tells.
        quick = ('import dbus, dbus.lowlevel, sys\nfor _ in range(5):\n    b = dbus.bus.BusConnection(sys.argv[1])\n'
                 '    m = dbus.lowlevel.MethodCallMessage("%s", "/net/hadess/SensorProxy", "%s", "ClaimLight")\n'
                 '    m.set_no_reply(True)\n    b.send_message(m)\n    b.flush()\n    b.close()\n' % (NAME, NAME))
        r = subprocess.run(['/usr/bin/python3', '-c', quick, bus.address], capture_output=True, text=True, env=bus.env)
        assert r.returncode == 0, r.stderr[-500:]
        eventually(lambda: open(work + '/evflowd.log').read().count('left the bus; its claims ended') == 6, '5 more departures', 5)
        eventually(lambda: read_now('als') == 'no', 'als no longer read after 5 clients claimed it and left at once', 5)
        print('check-sensor-proxy: 5 clients that claim the light and leave at once, gone before evflowd watches them: '
              'their claims end too')
        # Unclaimed, the service costs no wake-up (docs/benchmarks.md, I1): no timer, no
        # signal from other connections (iio-sensor-proxy's monitor-sensor is on the other bus).
        idle = subprocess.run([os.path.join(os.path.dirname(__file__), 'idle-cost'), '--pid', str(daemon.pid),
                               '--seconds', '3', '--max', '3'], capture_output=True, text=True)
        assert idle.returncode == 0, idle.stdout + idle.stderr
        print('check-sensor-proxy: no claim, no wake-ups: %s' % idle.stdout.strip().splitlines()[-1])

        # A claim of a kind with no sensor is taken (it is read once one comes); an unknown method is refused.
        for method, ok in (('ClaimProximity', True), ('ReleaseProximity', True), ('ClaimGyroscope', False)):
            calls = [b.busctl('call', NAME, '/net/hadess/SensorProxy', NAME, method, check=False) for b in (bus, proxy_bus)]
            assert [c.returncode == 0 for c in calls] == [ok, ok], (method, [(c.returncode, c.stderr) for c in calls])
        print('check-sensor-proxy: ClaimProximity without a proximity sensor is taken, an unknown method refused (both)')

        r = bus.busctl('set-property', NAME, '/net/hadess/SensorProxy', NAME, 'LightLevel', 'd', '1', check=False)
        assert r.returncode != 0 and 'read-only' in r.stderr, r.stderr
        if monitors[0].user:
            r = subprocess.run(monitors[0].user + ['/usr/bin/python3', '-c', 'import dbus, sys; b = dbus.bus.BusConnection(sys.argv[1]); '
                                                   'print(b.request_name("%s", 4))' % NAME, bus.address],
                               capture_output=True, text=True, env=bus.env)
            assert r.returncode != 0 and 'AccessDenied' in r.stderr, (r.stdout, r.stderr[-500:])
            print('check-sensor-proxy: the properties are read-only; another user cannot take the name')
        else:
            print('check-sensor-proxy: the properties are read-only (not root: whether another user can take the name is not checked)')
    finally:
        for monitor in monitors:
            monitor.kill()
        if proxy:
            proxy.terminate()
            proxy.wait(timeout=20)
        daemon.terminate()
        code = daemon.wait(timeout=20)
        log.close()
        bus.stop()
        proxy_bus.stop()
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
