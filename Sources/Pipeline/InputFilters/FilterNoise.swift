import DeviceStreams
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
    ///   codes whose filter did not change keep their state; what a changed filter held is
    ///   delivered at once as a frame of its own (`NoiseFilter.configure`).
    /// - `onUpdate`: called after every step, inside the gate, with the frame delivered (or
    ///   nil) and the counters — the state store's writer — before the frame goes downstream.
    /// - `onSpurious`: called inside the gate with a key code whose spurious-release method
    ///   just turned on by itself (`SpuriousMode.auto`).
    /// - Time: windows are measured in event time (frame times). Values that settled before
    ///   a frame's time are delivered before that frame even when the timer has not fired yet.
    ///   The timer fires a window's end only once `clock` says every frame up to it has come
    ///   (`SampleClock.schedulerTime`): live that is the end itself; a replay slower than
    ///   recorded would otherwise close a window before a frame recorded inside it arrived.
    public func filterNoise(_ settings: DeviceFilterSettings, scheduler: SchedulerType,
                            clock: SampleClock = .live,
                            settingsUpdates: Observable<DeviceFilterSettings> = .never(),
                            onUpdate: ((InputFrame?, DeviceCounters) -> Void)? = nil,
                            onSpurious: ((UInt16) -> Void)? = nil) -> Observable<InputFrame> {
        let source = self.asObservable()
        return Observable.create { observer in
            NoiseFilterStage.subscribe(source, settings, scheduler: scheduler, clock: clock, settingsUpdates: settingsUpdates,
                                       onUpdate: onUpdate, onSpurious: onSpurious, downstream: observer)
        }
    }
}

/// The filter stage without an `Observable` of its own: what `filterNoise` subscribes, and
/// what `DeviceHub` subscribes directly so a frame crosses one observer closure into the
/// stage and one out of it (no operator wrapper between the device and its filter).
enum NoiseFilterStage {
    /// Subscribes the filter to `frames`, delivering to `downstream`, with `filterNoise`'s
    /// semantics; `onFrame` sees each frame as it arrives, before the filter (on the delivering
    /// thread); `onOutput` sees each frame the filter lets out, before `onUpdate` and
    /// `downstream` (`NoiseFilterMachine.deliver`). The returned disposable disposes the frames' and settings' subscriptions and
    /// the timer.
    static func subscribe(_ frames: Observable<InputFrame>, _ settings: DeviceFilterSettings, scheduler: SchedulerType,
                          clock: SampleClock = .live, settingsUpdates: Observable<DeviceFilterSettings>,
                          onFrame: ((InputFrame) -> Void)? = nil,
                          onOutput: ((InputFrame) -> Void)? = nil,
                          onUpdate: ((InputFrame?, DeviceCounters) -> Void)?,
                          onSpurious: ((UInt16) -> Void)?,
                          downstream: AnyObserver<InputFrame>) -> Disposable {
        let sink = TimedSink(NoiseFilterMachine(downstream: downstream, filter: NoiseFilter(settings: settings),
                                                onOutput: onOutput, onUpdate: onUpdate, onSpurious: onSpurious,
                                                clock: clock),
                             scheduler: scheduler)
        let settingsSubscription = settingsUpdates.subscribe(onNext: { [weak sink] in sink?.send(.configure($0)) })
        // Strong: the source holds this observer only until it ends or is disposed, and the
        // sink holds nothing of the source, so there is no cycle; a weak load per frame would
        // cost a side-table look-up.
        let input: AnyObserver<InputFrame>
        if let onFrame {
            input = AnyObserver { event in
                if case .next(let frame) = event { onFrame(frame) }
                sink.send(.event(event))
            }
        } else {
            input = AnyObserver { sink.send(.event($0)) }
        }
        let subscription = frames.subscribe(input)
        return Disposables.create(settingsSubscription, Disposables.create(subscription, sink))
    }
}

/// Drives a `NoiseFilter` from frames, ticks and settings: the `TimedMachine` of the
/// filter stage, run by the same `TimedSink` (gate, timer slot, disposal) as the core's timed
/// operators.
struct NoiseFilterMachine: TimedMachine {
    enum Input {
        case event(Event<InputFrame>)
        /// Boxed: the settings are large and come on a reload, frames are small and come at
        /// input rate, and an input is copied into the sink's gate message and destroyed
        /// per frame; with the settings inline every copy goes through the large case's
        /// outlined value witness.
        indirect case configure(DeviceFilterSettings)
    }

    private let downstream: AnyObserver<InputFrame>
    private let onOutput: ((InputFrame) -> Void)?
    private let onUpdate: ((InputFrame?, DeviceCounters) -> Void)?
    private let onSpurious: ((UInt16) -> Void)?
    private var filter: NoiseFilter
    /// The timer, on the filter's next deadline: every input and tick that changes the filter
    /// ends with `rearm`, so between them its deadline is `filter.nextDeadline`.
    private var timer: EventTimeTimer
    private var reported = 0

    init(downstream: AnyObserver<InputFrame>, filter: NoiseFilter, onOutput: ((InputFrame) -> Void)? = nil,
         onUpdate: ((InputFrame?, DeviceCounters) -> Void)?, onSpurious: ((UInt16) -> Void)? = nil,
         clock: SampleClock = .live) {
        self.downstream = downstream
        self.onOutput = onOutput
        self.filter = filter
        timer = EventTimeTimer(clock: clock)
        self.onUpdate = onUpdate
        self.onSpurious = onSpurious
    }

    mutating func on(_ input: Input, _ sink: TimedSink<Self>) {
        switch input {
        case .event(.next(let frame)):
            // Filters decide on event time: what settled before this frame's time is
            // delivered first, whether or not the scheduler's timer has fired yet (a replay
            // faster than recorded runs ahead of its timers), so the output does not depend on
            // the replay speed.
            var next = timer.deadline   // the filter's next deadline, without scanning its codes
            while let due = next, due <= frame.time {
                let settled = filter.fire(at: due)
                report()
                deliver(settled)
                next = filter.nextDeadline
            }
            // Into a local first: as the argument of `deliver`, the filter would be stepped
            // after `self` was taken for the call, and `deliver` would read the old counters.
            let out = filter.process(frame)
            deliver(out)
        case .configure(let settings):
            // What the old filters held is delivered, not lost (NoiseFilter.configure).
            let out = filter.configure(settings)
            deliver(out)
        case .event(let stop):   // completed or an error: values still held are dropped, the device is gone
            EventTimeTimer.end(stop, downstream, sink)
            return
        }
        rearm(sink)
    }

    mutating func onTimer(_ token: UInt64, _ sink: TimedSink<Self>) {
        guard let deadline = timer.take(token, sink) else { return }   // stale timer
        let out = filter.fire(at: deadline)
        report()
        deliver(out)
        rearm(sink)
    }

    /// One step's result, in this order: `onOutput` (the hub writes a grabbed device's twin
    /// there, so the desktop waits for nothing else), `onUpdate` with the counters (the state
    /// store's writer; called for every step, with nil when nothing came out), downstream.
    private func deliver(_ out: InputFrame?) {
        if let out { onOutput?(out) }
        onUpdate?(out, filter.counters)
        if let out { downstream.on(.next(out)) }
    }

    /// Tells `onSpurious` about codes whose spurious-release method just turned on.
    private mutating func report() {
        let on = filter.spuriousTurnedOn
        guard on.count > reported else { return }
        for code in on[reported...] { onSpurious?(code) }
        reported = on.count
    }

    /// Keeps the timer armed for the filter's next deadline.
    private mutating func rearm(_ sink: TimedSink<Self>) {
        timer.follow(filter.nextDeadline, sink)
    }
}
