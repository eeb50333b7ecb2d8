import DeviceStreams
import InputModel
import Reactive

extension ObservableType where Element == InputFrame {
    /// The gestures of a device's keys (docs/gestures.md), from its filtered frames.
    ///
    /// - Element: `press` and `release` as their key events come; `single`, `double`,
    ///   `triple`, `long` and `hold` when their window or threshold ends — at once when a
    ///   frame shows that the end has passed, else when the timer fires.
    /// - Completion: passed on at once; a sequence in progress is dropped (the device is
    ///   gone: no gesture fires after removal).
    /// - Error: passed on at once, likewise.
    /// - Disposal: disposes the source, the settings subscription and the timer.
    /// - `settingsUpdates` (a configuration reload): settings that differ drop every sequence
    ///   in progress (nothing of it fires) and apply from the next frame.
    /// - Time: event time, as `filterNoise` (the same `EventTimeTimer` and `clock` rule), so a
    ///   replay at any speed makes the same gestures at the same times.
    public func gestures(_ settings: GestureSettings, scheduler: SchedulerType, clock: SampleClock = .live,
                         settingsUpdates: Observable<GestureSettings> = .never()) -> Observable<GestureEvent> {
        let source = self.asObservable()
        return Observable.create { observer in
            let sink = TimedSink(GestureMachine(downstream: observer, recognizer: GestureRecognizer(settings: settings),
                                                clock: clock),
                                 scheduler: scheduler)
            let updates = settingsUpdates.subscribe(onNext: { [weak sink] in sink?.send(.configure($0)) })
            let frames = source.subscribe(AnyObserver { sink.send(.event($0)) })
            return Disposables.create(updates, Disposables.create(frames, sink))
        }
    }
}

/// Drives a `GestureRecognizer` from frames, ticks and settings on a `TimedSink`.
struct GestureMachine: TimedMachine {
    enum Input {
        case event(Event<InputFrame>)
        case configure(GestureSettings)
    }

    private let downstream: AnyObserver<GestureEvent>
    private var recognizer: GestureRecognizer
    private var timer: EventTimeTimer

    init(downstream: AnyObserver<GestureEvent>, recognizer: GestureRecognizer, clock: SampleClock) {
        self.downstream = downstream
        self.recognizer = recognizer
        timer = EventTimeTimer(clock: clock)
    }

    mutating func on(_ input: Input, _ sink: TimedSink<Self>) {
        switch input {
        case .event(.next(let frame)):
            // What ended before this frame's time is decided first, whether or not the timer
            // has fired (a replay faster than recorded runs ahead of its timers).
            while let due = recognizer.nextDeadline, due <= frame.time {
                let fired = recognizer.fire(at: due)
                send(fired)
            }
            let made = recognizer.process(frame)
            send(made)
        case .configure(let settings):
            recognizer.configure(settings)
        case .event(let stop):   // completed or an error: a sequence in progress is dropped
            EventTimeTimer.end(stop, downstream, sink)
            return
        }
        timer.follow(recognizer.nextDeadline, sink)
    }

    mutating func onTimer(_ token: UInt64, _ sink: TimedSink<Self>) {
        guard let due = timer.take(token, sink) else { return }   // stale timer
        let fired = recognizer.fire(at: due)
        send(fired)
        timer.follow(recognizer.nextDeadline, sink)
    }

    private func send(_ events: [GestureEvent]) {
        for e in events { downstream.on(.next(e)) }
    }
}
