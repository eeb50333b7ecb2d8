import DeviceStreams
import InputModel
import Reactive

extension ObservableType where Element == SensorSample {
    /// Runs a sensor's filters (`SensorFilter`: per channel outlier gate, smoothing,
    /// hysteresis with settling; then the sensor's rate limit) over its samples.
    ///
    /// - Element: each sample is filtered at once; the output carries every channel's
    ///   published level (in `channels` order) and comes when a level changes. Levels that
    ///   settle, held samples that time out and rate-limited samples are delivered at their
    ///   deadline, from the timer, with that time.
    /// - Completion: passed on at once; anything held is dropped (the sensor is gone).
    /// - Error: passed on at once; anything held is dropped.
    /// - Disposal: disposes the source and the timer; nothing fires afterwards.
    /// - Scheduler: deadlines fire on `scheduler` through one reusable timer slot; samples
    ///   are filtered on the delivering thread; samples and ticks pass one `SerialGate`.
    /// - `settingsUpdates`: new settings (configuration reload) take effect between samples
    ///   (`SensorFilter.configure`): unchanged channels keep their state.
    /// - Time: every window (rate limit, settling, outlier timeout) is measured in sample
    ///   time (`SensorSample.time`), and a deadline is a sample time. Before a sample is
    ///   handled, every deadline at or before its time fires, in order, even when the timer
    ///   has not fired yet (a replay faster than recorded runs ahead of its timers). The timer
    ///   fires a deadline only once `clock` says every sample up to it has come
    ///   (`SampleClock.schedulerTime`): live that is the deadline itself; a replay slower than
    ///   recorded waits for the samples recorded before it. So a replay gives the same output,
    ///   values and times, at any speed.
    public func filterSensor(_ settings: SensorFilterSettings, channels: [SensorChannel],
                             scheduler: SchedulerType, clock: SampleClock = .live,
                             settingsUpdates: Observable<SensorFilterSettings> = .never()) -> Observable<SensorSample> {
        let source = self.asObservable()
        return Observable.create { observer in
            let sink = TimedSink(SensorFilterMachine(downstream: observer,
                                                     filter: SensorFilter(settings: settings, channels: channels),
                                                     clock: clock),
                                 scheduler: scheduler)
            let updates = settingsUpdates.subscribe(onNext: { [weak sink] in sink?.send(.configure($0)) })
            sink.setUpstream(source.subscribe(AnyObserver { sink.send(.event($0)) }))
            return Disposables.create(updates, sink)
        }
    }
}

/// Drives a `SensorFilter` from samples and ticks: the `TimedMachine` of `filterSensor`.
struct SensorFilterMachine: TimedMachine {
    enum Input {
        case event(Event<SensorSample>)
        /// Boxed: settings are large and rare, samples small and frequent.
        indirect case configure(SensorFilterSettings)
    }

    private let downstream: AnyObserver<SensorSample>
    private var filter: SensorFilter
    /// The timer, on the filter's next deadline (sample time): after every input and tick its
    /// deadline is `filter.nextDeadline`.
    private var timer: EventTimeTimer

    init(downstream: AnyObserver<SensorSample>, filter: SensorFilter, clock: SampleClock = .live) {
        self.downstream = downstream
        self.filter = filter
        timer = EventTimeTimer(clock: clock)
    }

    mutating func on(_ input: Input, _ sink: TimedSink<Self>) {
        switch input {
        case .configure(let settings):
            filter.configure(settings)
            rearm(sink)
        case .event(.next(let sample)):
            // What fell due before this sample's time goes first, timer or not (replay).
            while let due = filter.nextDeadline, due <= sample.time {
                if let out = filter.fire(at: due) { downstream.on(.next(out)) }
            }
            if let out = filter.process(sample) { downstream.on(.next(out)) }
            rearm(sink)
        case .event(.completed):
            downstream.on(.completed)
            sink.dispose()
        case .event(.error(let error)):
            downstream.on(.error(error))
            sink.dispose()
        }
    }

    mutating func onTimer(_ token: UInt64, _ sink: TimedSink<Self>) {
        guard let deadline = timer.take(token, sink) else { return }   // stale timer
        if let out = filter.fire(at: deadline) { downstream.on(.next(out)) }
        rearm(sink)
    }

    /// Keeps the timer armed for the filter's next deadline.
    private mutating func rearm(_ sink: TimedSink<Self>) {
        timer.follow(filter.nextDeadline, sink)
    }
}
