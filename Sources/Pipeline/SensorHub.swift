import DeviceStreams
import InputModel
import Reactive
import Synchronization

/// The pipeline for sensors, beside the input devices' (`DeviceHub`): each `SensorStream`
/// of the source becomes a session that lives as long as the sensor (until its `removal`
/// completes, or the hub stops).
///
/// ```
/// source.sensors                                       Observable<SensorStream>
///   → flatMap { session($0) }                          one inner subscription per sensor
///        samples (only while consumed) → .raw ─┬─→ share() → feeds → watchers, the bridge
///                 → filter(info, samples, clock) → .filtered ┘      (last raw/filtered kept for STATE)
/// ```
///
/// A sensor's samples are subscribed only while something consumes them: the session keeps
/// one reference-counted connection (`share`), made by the first watcher and disposed with
/// the last, so a sensor nobody watches is not read at all (no buffer, no polling). `STATE`
/// (`stateReadingOnce`) then reads a live sensor once — connected until its first sample has
/// gone through, then disconnected — and answers with it, `live: false`.
///
/// Confined to the scheduler like `DeviceHub`'s sessions: the source delivers there and the
/// connection is made and disposed there (`subscribe(on:)`), so a source's fd or timer is
/// only touched on the input thread. The sessions and their watchers are kept in the
/// registry both hubs share (`SessionRegistry`): one short lock taken when a sensor comes or
/// goes or a watcher starts, never per sample. A sensor announced under the id of a present
/// one (a re-plug whose removal has not come yet) replaces it: the stale session ends at once.
public final class SensorHub: @unchecked Sendable {
    /// The filter chain of one sensor: its raw samples in, the filtered samples out
    /// (per channel; the configuration's settings for the sensor), with the stream's clock
    /// (for timed filters: `filterSensor`'s `clock`). Runs on the scheduler.
    public typealias Filter = @Sendable (SensorInfo, Observable<SensorSample>, SampleClock) -> Observable<SensorSample>

    /// Passes samples through unchanged: a hub without sensor filters configured.
    public static let unfiltered: Filter = { _, samples, _ in samples }

    /// The orientation rule of a sensor, nil for none (not an accelerometer, or turned off).
    public typealias OrientationRule = @Sendable (SensorInfo) -> OrientationSettings?


    /// A session's last samples and counts, written per sample on the scheduler, read by
    /// `STATE` and `METRICS` (one short lock, never held while calling out).
    private struct Latest {
        var raw: SensorSample?
        var filtered: SensorSample?
        var orientation: String?
        var live = false
        var samplesIn: UInt64 = 0
        var samplesOut: UInt64 = 0
    }

    private final class SensorSession: @unchecked Sendable {
        let info: SensorInfo
        /// The source's count of failed reads.
        var health = SensorHealth()
        /// Whether `STATE` may read it once (`SensorStream.readableOnce`).
        var readable = false
        /// Raw and filtered samples, connected while anyone is subscribed.
        var updates: Observable<SensorUpdate> = .empty()
        /// `true` once the session closed; watchers' feeds end on it.
        let ended = BehaviorSubject<Bool>(value: false)
        let latest = PosixLocked<Latest>(Latest())
        /// Set once by `close` on the scheduler; atomic because `STATE`'s one-shot read checks it
        /// on the server's thread.
        let closed = Atomic<Bool>(false)

        init(info: SensorInfo) {
            self.info = info
        }

        var feed: SensorFeed {
            SensorFeed(info: info, updates: updates.take(until: ended.filter { $0 }),
                       ended: ended.filter { $0 }.map { _ in () }.take(1))
        }
    }

    /// What `feeds()` delivers: first `.present` with the sensors present when the watcher
    /// started, in the order they came, then `.added` for each sensor as it comes.
    public typealias Update = HubUpdate<SensorFeed>

    /// The scheduler the hub runs on (the input scheduler).
    public let scheduler: SchedulerType
    private let filter: Filter
    private let orientationRule: OrientationRule
    /// A sensor's orientation rule after each reload (nil: turned off); never, for a hub
    /// given its rule.
    private let orientationUpdates: @Sendable (SensorInfo) -> Observable<OrientationSettings?>
    private let registry = SessionRegistry<SensorSession, SensorFeed>()
    /// The configuration the filters follow (`init(scheduler:config:)`); nil for a hub given
    /// its filter.
    private let configs: BehaviorSubject<FilterConfig>?

    /// A hub on `scheduler` whose sensors' samples go through `filter`, and whose
    /// accelerometers' orientation is decided on the filtered samples by `orientation`.
    public init(scheduler: SchedulerType, filter: @escaping Filter = SensorHub.unfiltered,
                orientation: @escaping OrientationRule = { _ in nil }) {
        self.scheduler = scheduler
        self.filter = filter
        orientationRule = orientation
        orientationUpdates = { _ in .never() }
        configs = nil
    }

    /// A hub whose sensors run the configuration's filters (`filterSensor` with
    /// `sensorSettings(for:)`) and orientation rule, following `reload`: a reload reaches the
    /// running filters (`settingsUpdates`: unchanged channels keep their state); the
    /// orientation rule is taken when a sensor's reading starts and follows reloads too (new
    /// thresholds keep the current orientation; `orientation: off` clears it).
    public init(scheduler: SchedulerType, config: FilterConfig) {
        let configs = BehaviorSubject(value: config)
        self.scheduler = scheduler
        self.configs = configs
        filter = { info, samples, clock in
            let current = (try? configs.value()) ?? config
            // The subject replays the settings the chain starts with: only later ones are updates.
            let updates = configs.asObservable().skip(1).map { $0.sensorSettings(for: info) }
            return samples.filterSensor(current.sensorSettings(for: info), channels: info.channels, scheduler: scheduler,
                                        clock: clock, settingsUpdates: updates)
        }
        orientationRule = { info in ((try? configs.value()) ?? config).sensorSettings(for: info).orientation }
        orientationUpdates = { info in configs.asObservable().skip(1).map { $0.sensorSettings(for: info).orientation } }
    }

    /// A new configuration for the sensors' filters (SIGHUP); call it on the scheduler. A hub
    /// given its own filter ignores it.
    public func reload(_ config: FilterConfig) {
        configs?.onNext(config)
    }

    /// Runs the sensor pipeline over `sensors` until disposed; disposing ends every session.
    public func run(_ sensors: Observable<SensorStream>,
                    onError: @escaping @Sendable (any Error) -> Void = { _ in }) -> Disposable {
        sensors
            .flatMap { [weak self] stream -> Observable<Never> in
                self?.session(for: stream) ?? .empty()
            }
            .subscribe(on: scheduler)
            .subscribe(onError: onError)
    }

    /// The present sensors, in the order they came.
    public var sensors: [SensorInfo] { registry.sessions.map(\.info) }

    /// The number of present sensors.
    public var sensorCount: Int { registry.count }

    /// A present sensor's last samples, by id or else by exact name; nil when there is no
    /// such sensor, `.ambiguous` when several share the name.
    public func state(of sensor: String) -> SensorLookup {
        switch session(named: sensor) {
        case .found(let session): .found(Self.state(session))
        case .none: .none
        case .ambiguous: .ambiguous
        }
    }

    /// `state(of:)` with a value: a live sensor that nobody reads is read once first — its
    /// samples subscribed until the first one has gone through the filters (one read: a
    /// polled sensor's next tick, a buffered one's first scan), or until `timeout` — and the
    /// state after it is answered. A sensor being read, one whose source does not allow it
    /// (`SensorStream.readableOnce`: a replay's samples are its recording's, in time) and an
    /// unknown name are answered at once. `completion` runs on
    /// the scheduler, or on the caller's thread when answered at once.
    public func stateReadingOnce(of sensor: String, timeout: RxTimeInterval = .seconds(1),
                                 _ completion: @escaping @Sendable (SensorLookup) -> Void) {
        let session: SensorSession
        switch self.session(named: sensor) {
        case .none: return completion(.none)
        case .ambiguous: return completion(.ambiguous)
        case .found(let s): session = s
        }
        let now = Self.state(session)
        guard !now.live, session.readable, !session.closed.load(ordering: .acquiring) else { return completion(.found(now)) }
        let scheduler = scheduler
        let once = ReadOnce(scheduler: scheduler, completion)
        let finish: @Sendable () -> Void = { once.finish { .found(Self.state(session)) } }
        once.subscription.disposable = session.feed.updates.subscribe(
            onNext: { update in
                // The raw sample goes out before the filters run on it: answer after this turn.
                if case .raw = update { scheduler.schedule(after: .zero, finish) }
            },
            onError: { _ in finish() }, onCompleted: finish)
        once.timeout.disposable = scheduler.schedule(after: timeout, finish)
    }

    private enum SessionLookup {
        case found(SensorSession)
        case none
        case ambiguous
    }

    private func session(named sensor: String) -> SessionLookup {
        let sessions = registry.sessions
        if let byID = sessions.first(where: { $0.info.id.rawValue == sensor }) { return .found(byID) }
        let named = sessions.filter { $0.info.name == sensor }
        if named.count > 1 { return .ambiguous }
        return named.first.map(SessionLookup.found) ?? .none
    }

    /// Every present sensor's state, in the order they came (`METRICS`).
    public var states: [SensorState] { registry.sessions.map(Self.state) }

    private static func state(_ session: SensorSession) -> SensorState {
        let l = session.latest.withLock { $0 }
        var state = SensorState(info: session.info, raw: l.raw, filtered: l.filtered, orientation: l.orientation, live: l.live)
        state.samplesIn = l.samplesIn
        state.samplesOut = l.samplesOut
        state.readErrors = session.health.readErrors
        state.failed = session.health.failed
        return state
    }

    /// The sensor's inner sequence: its session lives from subscription until the sensor's
    /// `removal` completes, a newer sensor of the same id replaces it (the registry completes
    /// the sequence), or the subscription is disposed; `close` runs on its disposal.
    private func session(for stream: SensorStream) -> Observable<Never> {
        Observable<Never>.create { [weak self] observer in
            guard let self else {
                observer.onCompleted()
                return Disposables.create()
            }
            let session = open(stream, end: { observer.onCompleted() })
            let removal = stream.removal.subscribe(onError: { _ in observer.onCompleted() },
                                                   onCompleted: { observer.onCompleted() })
            return Disposables.create { [weak self] in
                removal.dispose()
                self?.close(session)
            }
        }
    }

    private func open(_ stream: SensorStream, end: @escaping () -> Void) -> SensorSession {
        let info = stream.info
        let session = SensorSession(info: info)
        session.health = stream.health
        session.readable = stream.readableOnce
        let latest = session.latest
        let filter = filter
        let samples = stream.samples
        let clock = stream.clock
        let orientationRule = orientationRule, orientationUpdates = orientationUpdates(info), scheduler = scheduler
        // One connection for every consumer: the first subscriber reads the sensor, the last
        // disposal stops it. Raw samples go out first, then through the filter chain.
        session.updates = Observable<SensorUpdate>.create { observer in
            latest.withLock { $0.live = true }
            let raw = PublishSubject<SensorSample>()
            // The orientation rule runs on each filtered sample before it goes out (it is
            // synchronous), so the sample carries the orientation it led to — unless the change
            // is held (`OrientationSettings.hold`): then it is published when the hold ends,
            // with the last filtered levels again at that time (`holdingChanges`).
            let levels = PublishSubject<SensorSample>()
            let delivering = OrientationDelivery()
            // `.undefined` comes when a reload turned the rule off: no orientation then.
            let orientation = levels.orientation(orientationRule(info), channels: info.channels,
                                                 mountMatrix: info.mountMatrix ?? .identity,
                                                 settingsUpdates: orientationUpdates)
                .map { TimedOrientation($0, at: delivering.time) }
                .holdingChanges(scheduler: scheduler, hold: { orientationRule(info)?.hold ?? 0 })
                .subscribe(onNext: { timed in
                    let o = timed.orientation == .undefined ? nil : timed.orientation.rawValue
                    let last = latest.withLock { l -> SensorSample? in
                        l.orientation = o
                        return l.filtered
                    }
                    if !delivering.inSample, let last {
                        observer.onNext(.filtered(SensorSample(time: timed.time, values: last.values), orientation: o))
                    }
                })
            let filtered = filter(info, raw.asObservable(), clock).subscribe(
                onNext: { sample in
                    delivering.time = sample.time
                    delivering.inSample = true
                    levels.onNext(sample)
                    delivering.inSample = false
                    let o = latest.withLock { l -> String? in
                        l.filtered = sample
                        l.samplesOut += 1
                        return l.orientation
                    }
                    observer.onNext(.filtered(sample, orientation: o))
                },
                onError: { observer.onError($0) },
                onCompleted: { observer.onCompleted() })
            let reading = samples.subscribe(
                onNext: { sample in
                    latest.withLock { l in
                        l.raw = sample
                        l.samplesIn += 1
                    }
                    observer.onNext(.raw(sample))
                    raw.onNext(sample)
                },
                onError: { raw.onError($0) },
                onCompleted: { raw.onCompleted() })
            return Disposables.create {
                reading.dispose()
                filtered.dispose()
                orientation.dispose()
                latest.withLock { $0.live = false }
            }
        }
        .subscribe(on: scheduler)
        .share()
        registry.register(session, as: info.id, end: end)
        return session
    }

    /// Ends a session once, when its inner sequence in `run`'s merge ends or is disposed.
    private func close(_ session: SensorSession) {
        guard !session.closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        registry.remove(session, as: session.info.id)
        session.ended.onNext(true)
        session.ended.onCompleted()
    }

    /// The hub's sensors for watchers: first `.present` with the sensors present now, then
    /// `.added` for each sensor as it comes. The snapshot and the later sensors neither
    /// overlap nor leave a gap (`SessionRegistry.watch`); disposal removes the watcher. A
    /// feed's updates are hot, and subscribing them is what makes the sensor read.
    public func feeds() -> Observable<Update> { registry.watch(\.feed) }
}
