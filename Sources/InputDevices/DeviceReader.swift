import Dispatch
import InputModel
import Reactive

/// Reads one open device on fd readiness and publishes its frames.
///
/// A `DispatchSourceRead` on the monitor's serial queue wakes the reader when the fd is
/// readable (no polling); each wake-up drains what libevdev has, up to a bound so one busy
/// device cannot starve the queue (the source fires again while data remains). Confined to
/// the queue. The fd is closed in the source's cancel handler, i.e. only after dispatch has
/// stopped watching it.
final class DeviceReader {
    let device: EvdevDevice
    let frames = PublishSubject<InputFrame>()
    private let counters: MonitorCounters
    private let onGone: (SystemError) -> Void
    private var source: DispatchSourceRead?
    private var assembler = FrameAssembler()
    private var stopped = false
    private static let eventsPerWakeUp = 512

    init(device: EvdevDevice, counters: MonitorCounters, onGone: @escaping (SystemError) -> Void) {
        self.device = device
        self.counters = counters
        self.onGone = onGone
    }

    /// Starts watching the fd on `queue`.
    func start(queue: DispatchQueue) {
        let source = DispatchSource.makeReadSource(fileDescriptor: device.fd.rawValue, queue: queue)
        source.setEventHandler { [weak self] in self?.drain() }
        let device = self.device
        source.setCancelHandler { device.close() }
        self.source = source
        source.activate()
    }

    /// Stops reading, completes the frame sequence and closes the fd (via the cancel handler).
    /// Idempotent.
    func stop() {
        if stopped { return }
        stopped = true
        if let source {
            source.cancel()
            self.source = nil
        } else {
            device.close()
        }
        assembler.discardPending()
        frames.onCompleted()
    }

    private func drain() {
        var budget = Self.eventsPerWakeUp
        do {
            while !stopped && budget > 0 {
                budget -= 1
                switch try device.next(sync: false) {
                case .drained:
                    return
                case .event(let event):
                    if let frame = assembler.feed(event) { frames.onNext(frame) }
                case .dropped(let event):
                    counters.synDropped.wrappingAdd(1, ordering: .relaxed)
                    if let frame = assembler.feed(event) { frames.onNext(frame) }
                    // libevdev's documented resync: read in sync mode until it says -EAGAIN.
                    while !stopped, case .event(let synced) = try device.next(sync: true) {
                        if let frame = assembler.feed(synced) { frames.onNext(frame) }
                    }
                }
            }
        } catch {
            if stopped { return }
            assembler.discardPending()
            onGone(error)
        }
    }
}
