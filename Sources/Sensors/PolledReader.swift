import DeviceStreams
import DeviceIO
import InputModel
import Reactive
#if canImport(Glibc)
import Glibc
#endif

/// Polls sysfs for every polled sensor being read, on ONE timer of the sensor thread.
///
/// One timer per `SensorThread` and poll period (evflowd has one of each, so one per
/// process): each tick
/// reads every registered sensor's channels and delivers their samples, so n polled sensors
/// cost one wake-up per period, not n. The timer is armed only while a sensor is registered,
/// so a polled sensor nobody reads costs nothing. Ticks keep to a grid (`previous +
/// interval`), not `now + interval`, so the rate does not drift by each tick's own work.
/// Confined to the loop thread.
final class SensorPoller {
    private let loop: SchedulerType
    private let interval: Int64
    private var timer: SchedulerTimer?
    private var members: [(key: UInt64, reader: any PolledSensorReader)] = []
    private var nextKey: UInt64 = 0
    private var deadline: Int64 = 0

    init(loop: SchedulerType, interval: Int64) {
        self.loop = loop
        self.interval = interval
    }

    /// Ticks (for tests and stats).
    private(set) var ticks = 0
    /// Sensors being polled.
    var memberCount: Int { members.count }

    func add(_ reader: any PolledSensorReader) -> UInt64 {
        nextKey += 1
        members.append((nextKey, reader))
        if members.count == 1 {
            let timer = self.timer ?? loop.makeTimer { [weak self] _ in self?.tick() }
            self.timer = timer
            deadline = loop.now + interval
            timer.arm(at: deadline, token: 0)
        }
        return nextKey
    }

    func remove(_ key: UInt64) {
        members.removeAll { $0.key == key }
        if members.isEmpty, let timer {
            // Invalidated, not disarmed: a timer holds the loop's heap slot and its handler.
            timer.invalidate()
            self.timer = nil
        }
    }

    /// Stops polling everything (the monitor's subscription ended).
    func stop() {
        members = []
        timer?.invalidate()
        timer = nil
    }

    private func tick() {
        ticks += 1
        let now = loop.now
        // A tick that is late by more than a period (a suspended machine) starts a new grid.
        deadline = deadline + interval > now ? deadline + interval : now + interval
        // A reader may remove itself (its consumer disposes in onNext): iterate a copy.
        for member in members { member.reader.poll(time: now) }
        if !members.isEmpty { timer?.arm(at: deadline, token: 0) }
    }
}

/// Reads one polled sensor: one fd per channel attribute, kept open and read with `pread`
/// at offset 0 (sysfs regenerates the value on each read from the start), so a tick costs one
/// system call per channel. Confined to the sensor thread (`SensorThread`).
final class PolledReader: PolledSensorReader {
    private let live = LiveResources.Token()
    private let path: String
    private var channels: [IIODevice.PolledChannel]
    private var fds: [FileDescriptor]
    /// When an out-of-range value last made the conversions be read again.
    private var lastReread = Int64.min
    private let deliver: (SensorSample) -> Void
    private let gone: () -> Void
    private let health: SensorHealth
    private var buffer = [UInt8](repeating: 0, count: 64)

    /// Opens every channel's attribute; throws the first failure (closing what was opened).
    init(device: IIODevice, health: SensorHealth = SensorHealth(),
         deliver: @escaping (SensorSample) -> Void, gone: @escaping () -> Void) throws(SystemError) {
        path = device.path
        channels = device.polledChannels
        var fds: [FileDescriptor] = []
        for channel in channels {
            do {
                fds.append(try FileDescriptor.openForReading("\(device.path)/\(channel.attribute)"))
            } catch {
                for fd in fds { fd.close() }
                throw error
            }
        }
        self.fds = fds
        self.deliver = deliver
        self.gone = gone
        self.health = health
        // The device was described when it came; its scale may have changed since.
        rereadConversions()
    }

    /// Reads every channel once and delivers the sample (at `time`, the read time). A
    /// channel that fails to read or parse skips this tick's sample and counts as a failed
    /// read (`SensorHealth`); ENODEV ends the sensor. A value out of its quantity's
    /// `plausibleRange` makes the channels' scale and offset be read again (at most once a
    /// second) and is converted with them.
    func poll(time: Int64) {
        var values: [Double] = []
        values.reserveCapacity(channels.count)
        for (i, fd) in fds.enumerated() {
            let n = buffer.withUnsafeMutableBytes { pread(fd.rawValue, $0.baseAddress, $0.count, 0) }
            if n < 0 {
                let error = errno
                if error == ENODEV {
                    gone()
                } else {
                    health.recordError(error)
                }
                return
            }
            guard let raw = parse(n) else {
                health.recordError(EINVAL)
                return
            }
            var value = channels[i].conversion.physical(raw)
            if !channels[i].channel.quantity.plausibleRange.contains(value),
               lastReread == .min || time - lastReread >= 1_000_000_000 {
                lastReread = time
                rereadConversions()
                value = channels[i].conversion.physical(raw)
            }
            values.append(value)
        }
        health.recordSuccess()
        deliver(SensorSample(time: time, values: values))
    }

    /// Reads every channel's `_scale` and `_offset` again: on udev's `change` for the device,
    /// and when a value is out of range (a driver changed them, as a light sensor's
    /// auto-gain does).
    func rereadConversions() {
        for i in channels.indices { channels[i].conversion = IIODevice.conversion(of: channels[i], path: path) }
    }

    private func parse(_ count: Int) -> Double? {
        var end = count
        while end > 0 && (buffer[end - 1] == 10 || buffer[end - 1] == 32) { end -= 1 }
        return Double(String(decoding: buffer[0..<end], as: UTF8.self))
    }

    func close() {
        for fd in fds { fd.close() }
        fds = []
    }
}
