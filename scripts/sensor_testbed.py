#!/usr/bin/python3
"""umockdev testbeds with IIO sensors, the way iio-sensor-proxy's own test suite builds them.

Run with Debian's /usr/bin/python3 (python3-gi and gir1.2-umockdev-1.0 are installed for it)
under umockdev-wrapper, as iio-sensor-proxy runs its integration tests: the testbed's uevents
are sent through the preload library's emulated netlink socket, from a process that has it.

A sensor is a umockdev device description (add_from_string): sysfs attributes ("A:") are
plain files in the testbed, so a polled sensor's value changes by rewriting its attribute,
and the writes a reader makes (buffer/enable, scan_elements/*_en) land in the same files,
where the test reads them back. A buffered sensor's node ("N: iio:deviceN", no contents) is
a pty in raw mode: the reader opens /dev/iio:deviceN (redirected by the preload library to
the pty's slave) and the test writes scans into the master (Testbed.get_dev_fd).

  sensor_testbed.py check PROBE          the monitor in evflow-sensors-probe (scripts/check-sensors)
  sensor_testbed.py check-daemon BINDIR  evflowd's live mode, through evflowctl (scripts/check-sensors)
"""
import os
import re
import select
import struct
import subprocess
import sys
import tempfile
import time

import gi
gi.require_version('UMockdev', '1.0')
from gi.repository import UMockdev  # noqa: E402


def describe(path, attributes, properties=(), node=None):
    """A umockdev device description: sysfs path, udev properties, attributes, node."""
    lines = ['P: ' + path]
    if node:
        lines.append('N: ' + node)
    lines.append('E: SUBSYSTEM=iio')
    lines.append('E: DEVTYPE=iio_device')
    if node:
        lines.append('E: DEVNAME=/dev/' + node)
    for key, value in properties:
        lines.append('E: %s=%s' % (key, value))
    for key, value in attributes:
        lines.append('A: %s=%s' % (key, value))
    return '\n'.join(lines) + '\n'


def plug(testbed, description):
    """Adds a device and sends its `add` uevent, as udevd does once it has processed it.

    Devices are plugged while the reader runs, not put in the testbed before it starts:
    libudev reports a device as initialised only when udevd's database has an entry for it
    (/run/udev/data), which Debian 12's umockdev (0.17) neither writes nor redirects, and
    evflow, like its input-device monitor, leaves an uninitialised device to the `add`
    udevd will send for it."""
    # Under the preload library (umockdev-wrapper) the testbed sends the `add` itself.
    assert testbed.add_from_string(description)
    return '/sys' + description.splitlines()[0][3:]


def change(testbed, syspath, attribute, value):
    """Changes an attribute's value in place, as a kernel attribute changes: the same file.
    (Testbed.set_attribute replaces the file by a new one, which a reader that keeps the
    attribute open, as evflow does, would never see.)"""
    with open(testbed.get_root_dir() + syspath + '/' + attribute, 'r+') as f:
        f.truncate(0)
        f.write(value + '\n')


LIGHT = '/devices/platform/als.0/iio:device0'
ACCEL = '/devices/platform/accel.0/iio:device1'
GYRO = '/devices/platform/gyro.0/iio:device2'


def light(raw=100):
    """A polled ambient-light sensor: in_illuminance_raw × 0.5 lux."""
    return describe(LIGHT, [('name', 'als'), ('in_illuminance_raw', str(raw)), ('in_illuminance_scale', '0.5')],
                    [('ID_PATH', 'platform-als.0')])


def accelerometer(x=0, y=-981, z=0):
    """A polled accelerometer in 0.01 m/s² counts, mounted rotated (its mount matrix)."""
    return describe(ACCEL, [('name', 'accel_3d'), ('in_accel_x_raw', str(x)), ('in_accel_y_raw', str(y)),
                            ('in_accel_z_raw', str(z)), ('in_accel_scale', '0.01'),
                            ('in_accel_mount_matrix', '0, 1, 0; -1, 0, 0; 0, 0, 1')],
                    [('ID_PATH', 'platform-accel.0')])


def gyroscope():
    """A buffered gyroscope: three le:s16/16>>0 axes at 0.001 rad/s per count and the
    timestamp (monotonic), its own trigger set; scans are fed through its pty node."""
    attributes = [('name', 'gyro_3d'), ('dev', '239:2'), ('in_anglvel_scale', '0.001'),
                  ('buffer/enable', '0'), ('buffer/length', '2'),
                  ('trigger/current_trigger', 'gyro_3d-dev2'), ('current_timestamp_clock', 'realtime')]
    for i, axis in enumerate('xyz'):
        attributes += [('scan_elements/in_anglvel_%s_en' % axis, '0'), ('scan_elements/in_anglvel_%s_index' % axis, str(i)),
                       ('scan_elements/in_anglvel_%s_type' % axis, 'le:s16/16>>0')]
    attributes += [('scan_elements/in_timestamp_en', '0'), ('scan_elements/in_timestamp_index', '3'),
                   ('scan_elements/in_timestamp_type', 'le:s64/64>>0')]
    return describe(GYRO, attributes, [('ID_PATH', 'platform-gyro.0')], node='iio:device2')


def gyro_scan(x, y, z, timestamp):
    """One scan as the kernel lays it out: 3 × s16, 2 bytes of padding, s64 at offset 8."""
    return struct.pack('<hhhxxq', x, y, z, timestamp)


class Probe:
    """evflow-sensors-probe under the testbed, its lines read with a deadline."""

    def __init__(self, testbed, probe, args=()):
        env = dict(os.environ, UMOCKDEV_DIR=testbed.get_root_dir(), LD_PRELOAD='libumockdev-preload.so.0')
        self.process = subprocess.Popen([probe] + list(args), env=env, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.lines = []

    def expect(self, predicate, what, seconds=10):
        """The first unread line satisfying predicate, waiting for it; the others stay unread
        (sensors' lines interleave)."""
        deadline = time.monotonic() + seconds
        while True:
            for i, line in enumerate(self.lines):
                if predicate(line):
                    del self.lines[i]
                    return line
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self.process.stdout], [], [], remaining)[0]:
                raise AssertionError('no %s within %d s; unread: %s' % (what, seconds, self.lines[-10:]))
            line = self.process.stdout.readline()
            if not line:
                raise AssertionError('the probe exited (%s) before %s' % (self.process.wait(), what))
            self.lines.append(line.rstrip('\n'))

    def stop(self):
        self.process.terminate()
        out, _ = self.process.communicate(timeout=10)
        return self.process.returncode, out


def values(line):
    """{channel: value} of a sample line."""
    return {k: float(v) for k, v in (part.split('=') for part in line.split()[3:])}


def check(probe_path):
    testbed = UMockdev.Testbed.new()
    root = testbed.get_root_dir()
    probe = Probe(testbed, probe_path, ['--poll-ms', '50'])
    try:
        probe.expect(lambda l: l == 'ready', 'the probe ready')
        plug(testbed, light(100))
        plug(testbed, accelerometer())
        # (a) a polled light sensor: samples in lux, following the attribute.
        line = probe.expect(lambda l: l.startswith('added iio:device0 '), 'the light sensor')
        assert ' als polled illuminance[lx]' in line, line
        line = probe.expect(lambda l: l.startswith('sample iio:device0 '), 'a light sample')
        assert values(line) == {'illuminance': 50.0}, line
        change(testbed, '/sys' + LIGHT, 'in_illuminance_raw', '640')
        probe.expect(lambda l: l.startswith('sample iio:device0 ') and values(l) == {'illuminance': 320.0}, '320 lx')
        print('check-sensors: polled light sensor: 100 and 640 counts arrive as 50 and 320 lx')
        # The driver switches its gain: a new scale, announced by a change uevent, is read again
        # (issue #29, item 5).
        change(testbed, '/sys' + LIGHT, 'in_illuminance_scale', '0.25')
        testbed.uevent('/sys' + LIGHT, 'change')
        probe.expect(lambda l: l.startswith('sample iio:device0 ') and values(l) == {'illuminance': 160.0}, '160 lx')
        change(testbed, '/sys' + LIGHT, 'in_illuminance_scale', '0.5')
        testbed.uevent('/sys' + LIGHT, 'change')
        probe.expect(lambda l: l.startswith('sample iio:device0 ') and values(l) == {'illuminance': 320.0}, '320 lx again')
        print('check-sensors: a change uevent: the new scale is read again (640 counts × 0.25 = 160 lx, and back)')

        # (b) a polled accelerometer: m/s² on three axes.
        line = probe.expect(lambda l: l.startswith('added iio:device1 '), 'the accelerometer')
        assert 'accel_3d polled accel_x[m/s²] accel_y[m/s²] accel_z[m/s²]' in line, line
        line = probe.expect(lambda l: l.startswith('sample iio:device1 '), 'an accelerometer sample')
        assert values(line) == {'accel_x': 0.0, 'accel_y': -9.81, 'accel_z': 0.0}, line
        print('check-sensors: polled accelerometer: (0, -981, 0) counts arrive as (0, -9.81, 0) m/s²')

        # (c) a buffered gyroscope appears; its scans are decoded with their timestamps.
        plug(testbed, gyroscope())
        line = probe.expect(lambda l: l.startswith('added iio:device2 '), 'the hot-plugged gyroscope')
        assert 'gyro_3d buffered anglvel_x[rad/s] anglvel_y[rad/s] anglvel_z[rad/s]' in line, line
        sysfs = root + '/sys' + GYRO
        for _ in range(100):
            if open(sysfs + '/buffer/enable').read().strip() == '1':
                break
            time.sleep(0.05)
        attrs = {name: open(sysfs + '/' + name).read().strip() for name in
                 ['buffer/enable', 'buffer/length', 'current_timestamp_clock', 'trigger/current_trigger',
                  'scan_elements/in_anglvel_x_en', 'scan_elements/in_timestamp_en']}
        assert attrs == {'buffer/enable': '1', 'buffer/length': '128', 'current_timestamp_clock': 'monotonic',
                         'trigger/current_trigger': 'gyro_3d-dev2', 'scan_elements/in_anglvel_x_en': '1',
                         'scan_elements/in_timestamp_en': '1'}, attrs
        master = testbed.get_dev_fd('/dev/iio:device2')
        assert master >= 0, 'no pty for /dev/iio:device2'
        stamp = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
        os.write(master, gyro_scan(1000, -2000, 3, stamp) + gyro_scan(0, 0, -1, stamp + 1000000))
        line = probe.expect(lambda l: l.startswith('sample iio:device2 '), 'a gyroscope sample')
        assert line.split()[2] == str(stamp), line
        assert values(line) == {'anglvel_x': 1.0, 'anglvel_y': -2.0, 'anglvel_z': 0.003}, line
        line = probe.expect(lambda l: l.startswith('sample iio:device2 '), 'the second gyroscope sample')
        assert line.split()[2] == str(stamp + 1000000) and values(line)['anglvel_z'] == -0.001, line
        print('check-sensors: buffered gyroscope (hot-plugged): buffer enabled, scans decoded in rad/s at their timestamps')

        # Removal completes the samples; the light sensor keeps going.
        testbed.uevent('/sys' + GYRO, 'remove')
        testbed.remove_device('/sys' + GYRO)
        probe.expect(lambda l: l == 'removed iio:device2', 'the gyroscope removed')
        change(testbed, '/sys' + LIGHT, 'in_illuminance_raw', '2')
        probe.expect(lambda l: l.startswith('sample iio:device0 ') and values(l) == {'illuminance': 1.0}, '1 lx after the removal')
        testbed.uevent('/sys' + LIGHT, 'remove')
        testbed.remove_device('/sys' + LIGHT)
        probe.expect(lambda l: l == 'removed iio:device0', 'the light sensor removed')
        print('check-sensors: hot-unplug: each removal completes that sensor\'s samples, the others go on')
    finally:
        code, rest = probe.stop()
    assert code == 0 and 'stopped' in rest, (code, rest[-500:])
    print('check-sensors: OK')


def check_daemon(bin_dir):
    """evflowd's live mode under the testbed, asserted through its socket with evflowctl."""
    testbed = UMockdev.Testbed.new()
    root = testbed.get_root_dir()
    work = tempfile.mkdtemp(prefix='evflow-sensors-')
    sock = work + '/evflowd.sock'
    env = dict(os.environ, UMOCKDEV_DIR=root, LD_PRELOAD='libumockdev-preload.so.0')
    log = open(work + '/evflowd.log', 'w')
    daemon = subprocess.Popen([bin_dir + '/evflowd', '--socket', sock], env=env, stderr=log)

    def ctl(*args, timeout=10):
        return subprocess.run([bin_dir + '/evflowctl'] + list(args) + ['--socket', sock],
                              capture_output=True, text=True, timeout=timeout).stdout

    def eventually(predicate, what, seconds=10):
        deadline = time.monotonic() + seconds
        while not predicate():
            if time.monotonic() > deadline:
                raise AssertionError('evflowd: no %s within %d s' % (what, seconds))
            time.sleep(0.05)

    def gyro_buffer():
        with open(root + '/sys' + GYRO + '/buffer/enable') as f:
            return f.read().strip()

    try:
        eventually(lambda: os.path.exists(sock), 'socket')
        # evflowd's udev monitor is set up once the socket listens (the input is ready first).
        plug(testbed, light(100))
        plug(testbed, gyroscope())
        eventually(lambda: ' als ' in ctl('devices') and ' gyro_3d ' in ctl('devices'), 'sensors in DEVICES')
        devices = ctl('devices')
        assert re.search(r'^iio-[0-9a-f]{8} +als +polled +illuminance \(lx\)$', devices, re.M), devices
        assert re.search(r'^iio-[0-9a-f]{8} +gyro_3d +buffered +anglvel_x \(rad/s\), anglvel_y \(rad/s\), anglvel_z \(rad/s\)$',
                         devices, re.M), devices
        # Nobody watches: nothing is read (the gyroscope's buffer is off). STATE of the light
        # reads it once and answers its value (issue #29, item 7), and reads it no more.
        state = ctl('state', 'als')
        assert 'read now:  no' in state and re.search(r'^illuminance +illuminance +\S+ +50 lx$', state, re.M), state
        assert gyro_buffer() == '0', gyro_buffer()
        # …and does not wake up for them (docs/benchmarks.md, I1): a polled sensor being read
        # would cost 10 wake-ups a second.
        idle = subprocess.run([os.path.join(os.path.dirname(__file__), 'idle-cost'), '--pid', str(daemon.pid),
                               '--seconds', '3', '--max', '3'], capture_output=True, text=True)
        assert idle.returncode == 0, idle.stdout + idle.stderr
        print('check-sensors: evflowd lists both sensors with their units, and reads neither while nobody watches: %s'
              % idle.stdout.strip().splitlines()[-1])

        # The raw stream has every poll; the filtered one publishes levels (a light's settles in
        # 500 ms, docs/sensors.md "Filters"), so a steady light is one message.
        watched = ctl('watch', '--sensor', 'illuminance', '--raw', '--count', '2')
        assert len(re.findall(r'  illuminance 50 lx$', watched, re.M)) == 2, watched
        change(testbed, '/sys' + LIGHT, 'in_illuminance_raw', '640')
        watched = ctl('watch', '--sensor', 'illuminance', '--raw', '--count', '3')
        assert re.search(r'  illuminance 320 lx$', watched, re.M), watched
        watched = ctl('watch', '--sensor', 'illuminance', '--count', '1')
        assert re.search(r'  illuminance 320 lx$', watched, re.M), watched
        print('check-sensors: evflowctl watch: the light sensor in lx, following its attribute')

        watch = subprocess.Popen([bin_dir + '/evflowctl', 'watch', '--sensor', 'gyro_3d', '--count', '1', '--socket', sock],
                                 stdout=subprocess.PIPE, text=True)
        eventually(lambda: gyro_buffer() == '1', 'buffer enabled by the watch')
        master = testbed.get_dev_fd('/dev/iio:device2')
        os.write(master, gyro_scan(250, 0, 0, time.clock_gettime_ns(time.CLOCK_MONOTONIC)))
        out, _ = watch.communicate(timeout=10)
        assert re.search(r'  anglvel_x 0\.25 rad/s, anglvel_y 0 rad/s, anglvel_z 0 rad/s$', out, re.M), out
        eventually(lambda: gyro_buffer() == '0', 'buffer disabled after the watch')
        print('check-sensors: evflowctl watch: the gyroscope\'s buffer is on only while watched; a scan arrives in rad/s')

        testbed.uevent('/sys' + GYRO, 'remove')
        testbed.remove_device('/sys' + GYRO)
        eventually(lambda: ' gyro_3d ' not in ctl('devices'), 'the gyroscope gone from DEVICES')
        print('check-sensors: a removed sensor leaves DEVICES')
    finally:
        daemon.terminate()
        code = daemon.wait(timeout=20)
        log.close()
    if code != 0:
        raise AssertionError('evflowd exited %d: %s' % (code, open(work + '/evflowd.log').read()[-1500:]))
    print('check-sensors: evflowd OK')


if __name__ == '__main__':
    if len(sys.argv) == 3 and sys.argv[1] in ('check', 'check-daemon'):
        try:
            (check if sys.argv[1] == 'check' else check_daemon)(sys.argv[2])
        except AssertionError as e:
            print('check-sensors: FAIL: %s' % e, file=sys.stderr)
            sys.exit(1)
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(64)
