import DeviceStreams
import DeviceIO
import InputModel
import Reactive
#if canImport(Glibc)
import Glibc
#endif

/// Reads one sensor through its buffer: opens `/dev/iio:deviceN` first — the kernel lets one
/// reader open it at a time, so a buffer another reader holds fails here, before anything of
/// that reader's set-up is touched — then enables the scan elements, sets a trigger and the
/// buffer's length, enables the buffer, and reads scans when the input loop's epoll says the
/// node is readable. A set-up that fails, and `stop()`, undo all of it: buffer off, then the
/// scan elements, trigger, length and timestamp clock as they were. Confined to the loop thread.
package final class BufferedReader {
    /// How the buffer is set up.
    struct Setup {
        /// The trigger to set (nil: the current one, or none needed).
        var trigger: String?
        /// `buffer/length` in scans.
        var bufferLength: Int
        /// Whether to enable the timestamp channel: it is used when its clock is, or can be
        /// set to, `monotonic` (`current_timestamp_clock`; set back on `stop()`).
        var useTimestamp: Bool
    }

    private let live = LiveResources.Token()
    private let device: IIODevice
    private var layout: ScanLayout
    private let useTimestamp: Bool
    private let deliver: (SensorSample) -> Void
    private let gone: () -> Void
    private let health: SensorHealth
    private var fd: FileDescriptor?
    private var token: InputLoop.Token?
    private weak var loop: InputLoop?
    /// What to write back on `stop()`, in order (attribute path, old value).
    private var restore: [(String, String)] = []
    private var bytes: [UInt8]
    private var filled = 0

    /// Scans read per wake-up at most (then the level-triggered fd brings the loop back).
    static let scansPerRead = 64

    /// Opens the node, then sets the device up (not yet watched: `start(loop:)`); throws the
    /// first failure, having closed the node and undone what was done.
    init(device: IIODevice, devnode: String, setup: Setup, health: SensorHealth = SensorHealth(),
         deliver: @escaping (SensorSample) -> Void, gone: @escaping () -> Void) throws(SystemError) {
        // The node first: it fails while another reader holds the buffer (EBUSY), and then
        // nothing of its set-up (clock, scan elements, trigger) has been changed under it.
        let node = try FileDescriptor.openForReading(devnode)
        var restore: [(String, String)] = []
        let monotonic = setup.useTimestamp && Self.monotonicClock(device, restore: &restore)
        guard let layout = device.layout(withTimestamp: monotonic) else {
            Self.undo(restore)
            node.close()
            throw SystemError(call: "scan_elements(\(device.path))", errno: ENODATA)
        }
        self.device = device
        self.layout = layout
        self.restore = restore
        self.useTimestamp = monotonic && layout.hasTimestamp
        self.deliver = deliver
        self.gone = gone
        self.health = health
        bytes = [UInt8](repeating: 0, count: layout.scanBytes * Self.scansPerRead)
        fd = node
        do {
            try configure(setup)
        } catch {
            node.close()
            fd = nil
            unconfigure()
            throw error
        }
        // The device was described when it came; its scale may have changed since.
        rereadConversions()
    }

    private func configure(_ setup: Setup) throws(SystemError) {
        let path = device.path
        // The buffer must be off while its scan elements, trigger and length change.
        try change(path + "/buffer/enable", to: "0")
        let wanted = Set(layout.elements.map(\.name))
        for element in device.scanElements {
            try change("\(path)/scan_elements/in_\(element.element.name)_en", to: wanted.contains(element.element.name) ? "1" : "0")
        }
        if let trigger = setup.trigger { try change(path + "/trigger/current_trigger", to: trigger) }
        // The length is a wish: a driver with a fixed hardware FIFO may refuse it.
        try? change(path + "/buffer/length", to: String(setup.bufferLength))
        try change(path + "/buffer/enable", to: "1")
    }

    /// Writes `value` unless the attribute holds it already, remembering the old value.
    private func change(_ attribute: String, to value: String) throws(SystemError) {
        try Self.change(attribute, to: value, restore: &restore)
    }

    private static func change(_ attribute: String, to value: String, restore: inout [(String, String)]) throws(SystemError) {
        let old = Sysfs.read(attribute) ?? ""
        if old.trimmingSpaces == value { return }
        try Sysfs.write(value, to: attribute)
        restore.append((attribute, String(old.trimmingSpaces)))
    }

    /// Whether the timestamp channel counts CLOCK_MONOTONIC: `current_timestamp_clock` says
    /// so, or is set so here (and back on `stop()`: the clock is the device's, other readers
    /// may want theirs). Without the attribute (kernels before 4.10 stamp with CLOCK_REALTIME)
    /// or when it cannot be set, the samples take the read time instead.
    static func monotonicClock(_ device: IIODevice, restore: inout [(String, String)]) -> Bool {
        guard device.timestampClock != nil else { return false }
        let attribute = device.path + "/current_timestamp_clock"
        guard (try? change(attribute, to: "monotonic", restore: &restore)) != nil else { return false }
        return Sysfs.read(attribute)?.trimmingSpaces == "monotonic"
    }

    /// Writes back what `restore` remembers, newest first.
    private static func undo(_ restore: [(String, String)]) {
        for (attribute, old) in restore.reversed() { try? Sysfs.write(old, to: attribute) }
    }

    /// Undoes `configure` in reverse: the buffer goes off first.
    private func unconfigure() {
        let enable = device.path + "/buffer/enable"
        try? Sysfs.write("0", to: enable)
        for (attribute, old) in restore.reversed() where attribute != enable {
            try? Sysfs.write(old, to: attribute)
        }
        if restore.contains(where: { $0.0 == enable && $0.1 == "1" }) { try? Sysfs.write("1", to: enable) }
        restore = []
    }

    /// Reads the scan elements' `_scale` and `_offset` again (udev's `change` for the device):
    /// the layout stays, each element's conversion is sysfs' now.
    func rereadConversions() {
        let now = Dictionary(IIODevice(path: device.path).scanElements.map { ($0.element.name, $0.element.conversion) },
                             uniquingKeysWith: { a, _ in a })
        let elements = layout.elements.map { e -> ScanLayout.Element in
            var e = e
            if let c = now[e.name] { e.conversion = c }
            return e
        }
        if let fresh = ScanLayout(elements: elements) { layout = fresh }
    }

    /// Watches the node on `loop` (its thread).
    func start(loop: InputLoop) {
        guard let fd, token == nil else { return }
        self.loop = loop
        token = loop.register(fd: fd.rawValue) { [weak self] in
            self?.readScans() ?? .drained
        }
    }

    /// Reads what is there, whole scans only (a partial one waits for its rest).
    private func readScans() -> InputLoop.Outcome {
        guard let fd else { return .drained }
        let n = bytes.withUnsafeMutableBytes { buffer in
            read(fd.rawValue, buffer.baseAddress! + filled, buffer.count - filled)
        }
        if n < 0 {
            let error = errno
            if error == EAGAIN || error == EINTR { return .drained }
            if error == ENODEV {
                // The device went away.
                unwatch()
                gone()
                return .drained
            }
            // Counted; after `SensorHealth.failedAfter` in a row the sensor is failed and the
            // node is no longer watched (level-triggered, it would wake the loop forever): the
            // sensor stays listed, and the next subscription sets the reading up again.
            if health.recordError(error) { unwatch() }
            return .drained
        }
        if n == 0 {
            // End of file (a FIFO or pty standing for the node lost its writer): gone.
            unwatch()
            gone()
            return .drained
        }
        filled += n
        let readTime = monotonicNow()
        let (samples, consumed) = bytes.withUnsafeBytes {
            layout.samples(from: UnsafeRawBufferPointer(rebasing: $0[0..<filled]), readTime: readTime, useTimestamp: useTimestamp)
        }
        if consumed > 0 {
            bytes.replaceSubrange(0..<filled - consumed, with: bytes[consumed..<filled])
            filled -= consumed
        }
        health.recordSuccess()
        for sample in samples { deliver(sample) }
        return .drained
    }

    private func unwatch() {
        if let token, let loop, let fd { loop.unregister(token, fd: fd.rawValue) }
        token = nil
    }

    /// Stops reading, closes the node and restores the device's settings.
    func stop() {
        unwatch()
        fd?.close()
        fd = nil
        unconfigure()
    }
}
