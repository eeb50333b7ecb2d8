import InputModel
import Reactive

extension ObservableType where Element == InputFrame {
    /// Runs a device's noise filters (`NoiseFilter`) over its frames.
    ///
    /// - Element: each frame filtered at once (nil results are not delivered); values that
    ///   settle at a window's end are delivered as a frame of their own at that time.
    /// - Completion: passed on at once; values still held are dropped — the device is gone
    ///   ("removal ends the window; nothing fires after disposal").
    /// - Error: passed on at once.
    /// - Disposal: disposes the source, the settings subscription and the timer.
    /// - Scheduler: window ends fire on `scheduler` through one reusable timer slot; frames
    ///   are filtered on the delivering thread. Frames, ticks and new settings pass one
    ///   `SerialGate`, so they are handled one at a time without locks.
    /// - `settingsUpdates`: new settings (configuration reload) take effect between frames;
    ///   codes whose filter did not change keep their state.
    /// - `onUpdate`: called after every step, inside the gate, with the frame delivered (or
    ///   nil) and the counters — the state store's writer.
    /// - `onSpurious`: called inside the gate with a key code whose spurious-release method
    ///   just turned on by itself (`SpuriousMode.auto`).
    /// - Time: windows are measured in event time (frame times). Values that settled before
    ///   a frame's time are delivered before that frame even when the timer has not fired yet.
    public func filterNoise(_ settings: DeviceFilterSettings, scheduler: SchedulerType,
                            settingsUpdates: Observable<DeviceFilterSettings> = .never(),
                            onUpdate: ((InputFrame?, DeviceCounters) -> Void)? = nil,
                            onSpurious: ((UInt16) -> Void)? = nil) -> Observable<InputFrame> {
        let source = self
        return Observable.create { observer in
            let sink = NoiseFilterSink(downstream: observer, filter: NoiseFilter(settings: settings),
                                       scheduler: scheduler, onUpdate: onUpdate, onSpurious: onSpurious)
            let settingsSubscription = settingsUpdates.subscribe(onNext: { [weak sink] in sink?.configure($0) })
            let frames = source.subscribe(AnyObserver { [weak sink] in sink?.on($0) })
            return Disposables.create(settingsSubscription, Disposables.create(frames, sink))
        }
    }
}

/// Drives a `NoiseFilter` from frames, ticks and settings, serialised by a `SerialGate`.
final class NoiseFilterSink: Disposable, @unchecked Sendable {
    enum Message {
        case event(Event<InputFrame>)
        case tick(UInt64)
        case configure(DeviceFilterSettings)
        case dispose
    }

    private let gate = SerialGate<Message>()
    private let downstream: AnyObserver<InputFrame>
    private let scheduler: SchedulerType
    private let onUpdate: ((InputFrame?, DeviceCounters) -> Void)?
    // Touched only inside the gate.
    private var filter: NoiseFilter
    private var timer: SchedulerTimer?
    private var armedDeadline: Int64?
    private var token: UInt64 = 0
    private var stopped = false
    private var reported = 0
    private let onSpurious: ((UInt16) -> Void)?

    init(downstream: AnyObserver<InputFrame>, filter: NoiseFilter, scheduler: SchedulerType,
         onUpdate: ((InputFrame?, DeviceCounters) -> Void)?, onSpurious: ((UInt16) -> Void)? = nil) {
        self.onSpurious = onSpurious
        self.downstream = downstream
        self.filter = filter
        self.scheduler = scheduler
        self.onUpdate = onUpdate
        LiveResources.increment()
    }

    deinit { LiveResources.decrement() }

    func on(_ event: Event<InputFrame>) { gate.send(.event(event)) { handle($0) } }
    func configure(_ settings: DeviceFilterSettings) { gate.send(.configure(settings)) { handle($0) } }
    func dispose() { gate.send(.dispose) { handle($0) } }

    private func handle(_ message: Message) {
        if stopped { return }
        switch message {
        case .event(.next(let frame)):
            // Filters decide on event time: what settled before this frame's time is
            // delivered first, whether or not the scheduler's timer has fired yet (a replay
            // faster than recorded runs ahead of its timers), so the output does not depend on
            // the replay speed.
            while let due = filter.nextDeadline, due <= frame.time {
                let settled = filter.fire(at: due)
                report()
                onUpdate?(settled, filter.counters)
                if let settled { downstream.on(.next(settled)) }
            }
            let out = filter.process(frame)
            onUpdate?(out, filter.counters)
            if let out { downstream.on(.next(out)) }
        case .tick(let t):
            guard t == token, let deadline = armedDeadline else { return }   // stale timer
            armedDeadline = nil
            let out = filter.fire(at: deadline)
            report()
            onUpdate?(out, filter.counters)
            if let out { downstream.on(.next(out)) }
        case .configure(let settings):
            filter.configure(settings)
            onUpdate?(nil, filter.counters)
        case .event(.completed):
            stop()
            downstream.on(.completed)
            return
        case .event(.error(let error)):
            stop()
            downstream.on(.error(error))
            return
        case .dispose:
            stop()
            return
        }
        rearm()
    }

    /// Tells `onSpurious` about codes whose spurious-release method just turned on.
    private func report() {
        let on = filter.spuriousTurnedOn
        guard on.count > reported else { return }
        for code in on[reported...] { onSpurious?(code) }
        reported = on.count
    }

    private func rearm() {
        guard let next = filter.nextDeadline else {
            if armedDeadline != nil { timer?.disarm() }
            armedDeadline = nil
            return
        }
        if next == armedDeadline { return }
        if timer == nil {
            timer = scheduler.makeTimer { [weak self] t in
                guard let self else { return }
                self.gate.send(.tick(t)) { self.handle($0) }
            }
        }
        token &+= 1
        armedDeadline = next
        timer?.arm(at: next, token: token)
    }

    private func stop() {
        stopped = true
        timer?.invalidate()
        timer = nil
    }
}
