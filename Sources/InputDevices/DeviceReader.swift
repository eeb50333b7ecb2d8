import DeviceIO
import InputModel
import Reactive

/// Reads one open device on fd readiness and publishes its frames.
///
/// The `InputLoop` calls the reader on its thread when the fd is readable or hung up (no
/// polling); each call drains what libevdev has, up to a bound so one busy device cannot
/// starve the others. When the bound cuts a wake-up short, libevdev may
/// hold the rest in its own queue with nothing left on the fd (it reads the fd only when its
/// queue is empty), so the reader says `.morePending` and the loop runs it again on its next turn
/// without waiting for readiness — a key release never waits for the next hardware event.
/// Confined to the loop thread. `stop()` unregisters the fd, then closes it.
final class DeviceReader {
    let device: EvdevDevice
    let frames = PublishSubject<InputFrame>()
    private let counters: MonitorCounters
    private let onGone: (SystemError) -> Void
    private var loop: InputLoop?
    private var token: InputLoop.Token?
    // Loop-thread state, touched per event: `@exclusivity(unchecked)` as the input loop's own
    // (no access spans the frame's delivery; the run-time check cost ~250 instructions a frame).
    @exclusivity(unchecked) private var assembler = FrameAssembler()
    @exclusivity(unchecked) private var stopped = false
    private static let eventsPerWakeUp = 512

    init(device: EvdevDevice, counters: MonitorCounters, onGone: @escaping (SystemError) -> Void) {
        self.device = device
        self.counters = counters
        self.onGone = onGone
    }

    /// Publishes the keys and switches down at open (`EvdevDevice.stateAtOpen`), then starts
    /// watching the fd.
    func start(loop: InputLoop) {
        if let frame = device.stateAtOpen { frames.onNext(frame) }
        self.loop = loop
        token = loop.register(fd: device.fd.rawValue) { [weak self] in self?.drain() ?? .drained }
    }

    /// Whether `stop()` ran.
    var isStopped: Bool { stopped }

    /// Stops reading, closes the fd and completes the frame sequence. Idempotent.
    func stop() {
        if stopped { return }
        stopped = true
        if let token { loop?.unregister(token, fd: device.fd.rawValue) }
        token = nil
        loop = nil
        device.close()
        assembler.discardPending()
        frames.onCompleted()
    }

    private func drain() -> InputLoop.Outcome {
        var budget = Self.eventsPerWakeUp
        do {
            while !stopped {
                if budget == 0 { return .morePending }
                budget -= 1
                switch try device.next(sync: false) {
                case .drained:
                    return .drained
                case .event(let event):
                    if let frame = assembler.feed(event) { frames.onNext(frame) }
                case .dropped(let event):
                    counters.synDropped.wrappingAdd(1, ordering: .relaxed)
                    // The frame in progress is incomplete (the kernel lost events): discarded.
                    // libevdev's documented resync — read in sync mode until it says -EAGAIN —
                    // hands out the differences between the state it knew and the device's;
                    // they go out as one resync frame (InputFrame.isResync), so the filters
                    // and a virtual twin take them as the device's state, not as edges to time.
                    assembler.discardPending()
                    var state: [InputEvent] = []
                    var time = event.time
                    while !stopped, case .event(let synced) = try device.next(sync: true) {
                        time = max(time, synced.time)
                        if !synced.isSynReport { state.append(synced) }
                    }
                    frames.onNext(.resync(dropped: event, state: state, time: time))
                }
            }
        } catch {
            if stopped { return .drained }
            assembler.discardPending()
            onGone(error)
        }
        return .drained
    }
}
