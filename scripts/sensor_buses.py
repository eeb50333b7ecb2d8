#!/usr/bin/python3
"""evflowd and Debian's iio-sensor-proxy as net.hadess.SensorProxy side by side: one umockdev
testbed, two private system buses, Debian's monitor-sensor on each.

Shared by scripts/sensor_proxy_check.py (scripts/check-sensor-proxy: the D-Bus behaviour) and
scripts/sensor_compare.py (scripts/compare-iio-sensor-proxy: the values of the fixtures'
sequences); both run under umockdev-wrapper with Debian's /usr/bin/python3, like
scripts/sensor_testbed.py, whose device descriptions and in-place attribute writes they use.

Each bus is a dbus-daemon with its own configuration standing for the system bus: the system
bus's default policy (no names owned, no method calls, except where a policy file allows) plus
one policy file — evflow's (systemd/evflow-sensor-proxy.conf, as installed) on the bus evflowd
serves with `sensor_proxy: true`, iio-sensor-proxy's package's on the other. Both daemons read
the same testbed. monitor-sensor (iio-sensor-proxy's client, the same binary for both, pointed
at its bus by DBUS_SYSTEM_BUS_ADDRESS) runs as nobody when this runs as root (the policies let
anyone call); each line it prints is stamped with CLOCK_MONOTONIC on arrival.
"""
import os
import pwd
import re
import subprocess
import tempfile
import threading
import time

import sensor_testbed as tb
from gi.repository import UMockdev

NAME = 'net.hadess.SensorProxy'
OBJECT = '/net/hadess/SensorProxy'
ACCEL = '/devices/platform/accel.0/iio:device0'
LIGHT = '/devices/platform/als.0/iio:device1'
PROX = '/devices/platform/prox.0/iio:device2'

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
    '  <policy user="%s"><allow own="%s"/></policy>\n' % (pwd.getpwuid(os.getuid()).pw_name, NAME))

# As root, clients run as nobody: what the policies allow any user.
AS_NOBODY = ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'] if os.getuid() == 0 else []


def accelerometer(x, y, z, scale):
    """A polled accelerometer, typed for iio-sensor-proxy as its udev rule would. It carries
    the hwdb's ACCEL_MOUNT_MATRIX, the negating one, which both daemons read before sysfs:
    the readings given here have +g along the axis pointing up (as the fixtures are
    recorded), iio-sensor-proxy's convention, now evflow's too, reads gravity, pointing down
    (docs/sensors.md, "Orientation"), so with the matrix both see the device as it is."""
    return tb.describe(ACCEL, [('name', 'accel_3d'), ('in_accel_x_raw', str(x)), ('in_accel_y_raw', str(y)),
                               ('in_accel_z_raw', str(z)), ('in_accel_scale', str(scale))],
                       [('ID_PATH', 'platform-accel.0'), ('IIO_SENSOR_PROXY_TYPE', 'iio-poll-accel'),
                        ('ACCEL_MOUNT_MATRIX', '-1, 0, 0; 0, -1, 0; 0, 0, -1')])


def light(raw, scale):
    """A polled ambient-light sensor: in_illuminance_raw × scale lux."""
    return tb.describe(LIGHT, [('name', 'als'), ('in_illuminance_raw', str(raw)), ('in_illuminance_scale', str(scale))],
                       [('ID_PATH', 'platform-als.0'), ('IIO_SENSOR_PROXY_TYPE', 'iio-poll-als')])


def proximity(raw, near_level):
    """A polled proximity sensor with its near level in PROXIMITY_NEAR_LEVEL, as the hwdb sets it."""
    return tb.describe(PROX, [('name', 'prox'), ('in_proximity_raw', str(raw))],
                       [('ID_PATH', 'platform-prox.0'), ('IIO_SENSOR_PROXY_TYPE', 'iio-poll-proximity'),
                        ('PROXIMITY_NEAR_LEVEL', str(near_level))])


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
        return self.busctl('get-property', NAME, OBJECT, NAME, name).stdout.strip()

    def interface(self):
        """The interface's members as busctl lists them: name, kind, signature, flags."""
        out = self.busctl('introspect', NAME, OBJECT, NAME).stdout
        return sorted(tuple(l.split()[i] for i in (0, 1, 2, -1)) for l in out.splitlines()[1:] if l.startswith('.'))

    def stop(self):
        self.process.terminate()
        self.process.wait()


class Monitor:
    """monitor-sensor on a bus, its lines stamped with CLOCK_MONOTONIC as they arrive."""

    def __init__(self, bus, who, log):
        self.who, self.log = who, log
        self.process = subprocess.Popen(AS_NOBODY + ['stdbuf', '-oL', 'monitor-sensor'], env=bus.env,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1)
        self.stamped = []
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        for line in self.process.stdout:
            self.stamped.append((time.monotonic(), line.rstrip('\n')))

    @property
    def lines(self):
        return [line for _, line in list(self.stamped)]

    def expect(self, pattern, what, seconds=10):
        def seen():
            return next((m for m in (re.search(pattern, l) for l in self.lines) if m), None)
        try:
            return eventually(seen, what, seconds)
        except AssertionError:
            raise AssertionError('monitor-sensor on %s: no %s; it printed:\n%s\n%s: %s' % (
                self.who, what, '\n'.join(self.lines), self.who, open(self.log).read()[-2000:]))

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.thread.join(timeout=5)

    def changes(self):
        """The property changes it printed, per sensor: what a client sees of the D-Bus behaviour."""
        return {kind: [m.group(1) for m in (re.search(pattern, l) for l in self.lines) if m] for kind, pattern in (
            ('orientation', r'Accelerometer orientation changed: (\S+)'), ('light', r'Light changed: (\S+ \(\w+\))'),
            ('proximity', r'Proximity value changed: (\d)'))}


class SideBySide:
    """evflowd (`sensor_proxy: true`) on one private system bus and iio-sensor-proxy on another,
    over one testbed; a context: on leaving, every child is stopped and, when the body raised
    nothing, an evflowd that did not exit 0 is an AssertionError."""

    def __init__(self, bin_dir, repo, prefix):
        self.bin_dir, self.repo, self.prefix = bin_dir, repo, prefix
        self.daemon = self.proxy = self.bus = self.proxy_bus = self.log = None
        self.monitors = []

    def __enter__(self):
        try:
            self._start()
        except BaseException:
            self.close()
            raise
        return self

    def _start(self):
        self.testbed = UMockdev.Testbed.new()
        self.work = tempfile.mkdtemp(prefix=self.prefix)
        os.chmod(self.work, 0o755)
        with open(self.work + '/evflow.yaml', 'w') as f:
            f.write('sensor_proxy: true\n')
        self.preload = {'UMOCKDEV_DIR': self.testbed.get_root_dir(), 'LD_PRELOAD': 'libumockdev-preload.so.0'}
        self.bus = Bus(self.work, 'evflow-bus', self.repo + '/systemd/evflow-sensor-proxy.conf')
        policy = next(p for p in ('/usr/share/dbus-1/system.d/net.hadess.SensorProxy.conf',
                                  '/etc/dbus-1/system.d/net.hadess.SensorProxy.conf') if os.path.exists(p))
        self.proxy_bus = Bus(self.work, 'iio-bus', policy)
        self.sock = self.work + '/evflowd.sock'
        self.log = open(self.work + '/evflowd.log', 'w')
        self.daemon = subprocess.Popen([self.bin_dir + '/evflowd', '--socket', self.sock, '--config', self.work + '/evflow.yaml'],
                                       env=dict(self.bus.env, **self.preload), stderr=self.log)

    def buses(self):
        return ((self.bus, 'evflowd'), (self.proxy_bus, 'iio-sensor-proxy'))

    def ctl(self, *args):
        return subprocess.run([self.bin_dir + '/evflowctl'] + list(args) + ['--socket', self.sock],
                              capture_output=True, text=True, timeout=10).stdout

    def plug(self, descriptions, names):
        """Plugs the sensors once evflowd's udev monitor listens (scripts/sensor_testbed.py, plug)
        and waits until evflowd lists them; iio-sensor-proxy, started after, finds them when it
        enumerates."""
        eventually(lambda: os.path.exists(self.sock), 'evflowd socket', 20)
        for description in descriptions:
            tb.plug(self.testbed, description)
        eventually(lambda: all(' %s ' % n in self.ctl('devices') for n in names), 'sensors in DEVICES')

    def change(self, syspath, attribute, value):
        tb.change(self.testbed, '/sys' + syspath, attribute, value)

    def start_proxy(self, ready_property='HasAccelerometer'):
        """iio-sensor-proxy on its bus; returns once both daemons own the name and say
        ready_property is true."""
        self.proxy = subprocess.Popen(['/usr/sbin/iio-sensor-proxy'], env=dict(self.proxy_bus.env, **self.preload),
                                      stderr=open(self.work + '/iio-sensor-proxy.log', 'w'))
        for b, who in self.buses():
            eventually(lambda: b.busctl('status', NAME, check=False).returncode == 0, who + ' owning ' + NAME)
            eventually(lambda: b.prop(ready_property) == 'b true', '%s: %s true' % (who, ready_property))

    def start_monitors(self):
        self.monitors = [Monitor(self.bus, 'evflowd', self.work + '/evflowd.log'),
                         Monitor(self.proxy_bus, 'iio-sensor-proxy', self.work + '/iio-sensor-proxy.log')]
        return self.monitors

    def close(self):
        """Stops every child; evflowd's exit code (None when it was not started)."""
        for monitor in self.monitors:
            monitor.kill()
        if self.proxy:
            self.proxy.terminate()
            try:
                self.proxy.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proxy.kill()
                self.proxy.wait()
        code = None
        if self.daemon:
            self.daemon.terminate()
            try:
                code = self.daemon.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.daemon.kill()
                code = self.daemon.wait()
        if self.log:
            self.log.close()
        for b in (self.bus, self.proxy_bus):
            if b:
                b.stop()
        return code

    def __exit__(self, kind, value, traceback):
        code = self.close()
        if kind is None and code != 0:
            raise AssertionError('evflowd exited %s: %s' % (code, open(self.work + '/evflowd.log').read()[-1500:]))
        return False
