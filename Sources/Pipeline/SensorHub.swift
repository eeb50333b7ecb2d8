import InputModel
import Reactive
import Synchronization

/// One sample of a sensor as the hub passes it on: as read, or out of the sensor's filters.
public enum SensorUpdate: Hashable, Sendable {
    /// The sample as the source read it (physical units).
    case raw(SensorSample)
    /// The sample out of the sensor's filter chain.
    case filtered(SensorSample)

    /// The sample.
    public var sample: SensorSample {
        switch self {
        case .raw(let s), .filtered(let s): s
        }
    }
}

/// A present sensor as a watcher gets it: its description and its updates (raw and
/// filtered), which complete when the sensor goes away or the hub stops.
public struct SensorFeed: Sendable {
    /// The sensor.
    public let info: SensorInfo
    /// Raw and filtered samples from the moment of subscribing; subscribing starts the
    /// sensor's reading if nobody else consumes it.
    public let updates: Observable<SensorUpdate>
}

/// What a sensor's `STATE` reports: the last samples seen, and whether anyone consumes it.
public struct SensorState: Hashable, Sendable {
    /// The sensor.
    public var info: SensorInfo
    /// The last sample read (nil before the sensor was first consumed).
    public var raw: SensorSample?
    /// The last sample out of the filters (nil before the first one).
    public var filtered: SensorSample?
    /// Whether the sensor is being read now (a watcher or the bridge consumes it).
    public var live: Bool

    /// A state.
    public init(info: SensorInfo, raw: SensorSample?, filtered: SensorSample?, live: Bool) {
        self.info = info
        self.raw = raw
        self.filtered = filtered
        self.live = live
    }
}

/// The pipeline for sensors, beside the input devices' (`DeviceHub`): each `SensorStream`
/// of the source becomes a session that lives as long as the sensor (until its `removal`
/// completes, or the hub stops).
///
/// ```
/// source.sensors                                       Observable<SensorStream>
///   → flatMap { session($0) }                          one inner subscription per sensor
///        samples (only while consumed) → .raw ─┬─→ share() → feeds → watchers, the bridge
///                 → filter(info, samples)   → .filtered ┘      (last raw/filtered kept for STATE)
/// ```
///
/// A sensor's samples are subscribed only while something consumes them: the session keeps
/// one reference-counted connection (`share`), made by the first watcher and disposed with
/// the last, so a sensor nobody watches is not read at all (no buffer, no polling). `STATE`
/// then answers with the last samples seen, `live: false` — it does not wake the sensor.
///
/// Confined to the scheduler like `DeviceHub`'s sessions: the source delivers there and the
/// connection is made and disposed there (`subscribe(on:)`), so a source's fd or timer is
/// only touched on the input thread. The registry shared with the server's threads is one
/// short lock taken when a sensor comes or goes or a watcher starts, never per sample.
public final class SensorHub: @unchecked Sendable {
    /// The filter chain of one sensor: its raw samples in, the filtered samples out
    /// (per channel; the configuration's settings for the sensor). Runs on the scheduler.
    public typealias Filter = @Sendable (SensorInfo, Observable<SensorSample>) -> Observable<SensorSample>

    /// Passes samples through unchanged: a hub without sensor filters configured.
    public static let unfiltered: Filter = { _, samples in samples }

    private final class SensorSession: @unchecked Sendable {
        let info: SensorInfo
        let sequence: Int
        /// Raw and filtered samples, connected while anyone is subscribed.
        var updates: Observable<SensorUpdate> = .empty()
        /// `true` once the session closed; watchers' feeds end on it.
        let ended = BehaviorSubject<Bool>(value: false)
        let latest = PosixLocked<(raw: SensorSample?, filtered: SensorSample?, live: Bool)>((nil, nil, false))
        var closed = false

        init(info: SensorInfo, sequence: Int) {
            self.info = info
            self.sequence = sequence
        }

        var feed: SensorFeed {
            SensorFeed(info: info, updates: updates.take(until: ended.filter { $0 }))
        }
    }

    /// What `feeds()` delivers.
    public enum Update: Sendable {
        /// First, once: the sensors present when the watcher started, in the order they came.
        case present([SensorFeed])
        /// Then each sensor as it comes.
        case added(SensorFeed)
    }

    private struct Registry {
        var sessions: [DeviceID: SensorSession] = [:]
        var watchers: [UInt64: PublishSubject<Update>] = [:]
        var nextWatcher: UInt64 = 0
        var nextSequence = 0
    }

    /// The scheduler the hub runs on (the input scheduler).
    public let scheduler: SchedulerType
    private let filter: Filter
    private let registry = PosixLocked(Registry())

    /// A hub on `scheduler` whose sensors' samples go through `filter`.
    public init(scheduler: SchedulerType, filter: @escaping Filter = SensorHub.unfiltered) {
        self.scheduler = scheduler
        self.filter = filter
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
    public var sensors: [SensorInfo] {
        registry.withLock { $0.sessions.values.sorted { $0.sequence < $1.sequence } }.map(\.info)
    }

    /// The number of present sensors.
    public var sensorCount: Int { registry.withLock { $0.sessions.count } }

    /// A present sensor's last samples, by id or else by exact name; nil when there is no
    /// such sensor, `.ambiguous` when several share the name.
    public func state(of sensor: String) -> SensorLookup {
        let sessions = registry.withLock { Array($0.sessions.values) }
        let found: SensorSession
        if let byID = sessions.first(where: { $0.info.id.rawValue == sensor }) {
            found = byID
        } else {
            let named = sessions.filter { $0.info.name == sensor }
            if named.count > 1 { return .ambiguous }
            guard let one = named.first else { return .none }
            found = one
        }
        let latest = found.latest.withLock { $0 }
        return .found(SensorState(info: found.info, raw: latest.raw, filtered: latest.filtered, live: latest.live))
    }

    /// The sensor's inner sequence: its session lives from subscription until the sensor's
    /// `removal` completes or the subscription is disposed.
    private func session(for stream: SensorStream) -> Observable<Never> {
        Observable<Never>.create { [weak self] observer in
            guard let self else {
                observer.onCompleted()
                return Disposables.create()
            }
            let session = open(stream)
            let removal = stream.removal.subscribe(onError: { _ in observer.onCompleted() },
                                                   onCompleted: { observer.onCompleted() })
            return Disposables.create { [weak self] in
                removal.dispose()
                self?.close(session)
            }
        }
    }

    private func open(_ stream: SensorStream) -> SensorSession {
        let info = stream.info
        if let stale = registry.withLock({ $0.sessions[info.id] }) { close(stale) }
        let session = registry.withLock { r -> SensorSession in
            r.nextSequence += 1
            return SensorSession(info: info, sequence: r.nextSequence)
        }
        let latest = session.latest
        let filter = filter
        let samples = stream.samples
        // One connection for every consumer: the first subscriber reads the sensor, the last
        // disposal stops it. Raw samples go out first, then through the filter chain.
        session.updates = Observable<SensorUpdate>.create { observer in
            latest.withLock { $0.live = true }
            let raw = PublishSubject<SensorSample>()
            let filtered = filter(info, raw.asObservable()).subscribe(
                onNext: { sample in
                    latest.withLock { $0.filtered = sample }
                    observer.onNext(.filtered(sample))
                },
                onError: { observer.onError($0) },
                onCompleted: { observer.onCompleted() })
            let reading = samples.subscribe(
                onNext: { sample in
                    latest.withLock { $0.raw = sample }
                    observer.onNext(.raw(sample))
                    raw.onNext(sample)
                },
                onError: { raw.onError($0) },
                onCompleted: { raw.onCompleted() })
            return Disposables.create {
                reading.dispose()
                filtered.dispose()
                latest.withLock { $0.live = false }
            }
        }
        .subscribe(on: scheduler)
        .share()
        let watchers = registry.withLock { r -> [PublishSubject<Update>] in
            r.sessions[info.id] = session
            return Array(r.watchers.values)
        }
        for watcher in watchers { watcher.onNext(.added(session.feed)) }
        return session
    }

    private func close(_ session: SensorSession) {
        if session.closed { return }
        session.closed = true
        registry.withLock { r in
            if r.sessions[session.info.id] === session { r.sessions[session.info.id] = nil }
        }
        session.ended.onNext(true)
        session.ended.onCompleted()
    }

    /// The hub's sensors for watchers: first `.present` with the sensors present now, then
    /// `.added` for each sensor as it comes. The snapshot and the later sensors neither
    /// overlap nor leave a gap (both decided under the registry's lock); disposal removes the
    /// watcher. A feed's updates are hot, and subscribing them is what makes the sensor read.
    public func feeds() -> Observable<Update> {
        Observable<Update>.deferred { [weak self] in
            guard let self else { return .empty() }
            let later = PublishSubject<Update>()
            let registration = Observable<Update>.create { [weak self] observer in
                guard let self else {
                    observer.onCompleted()
                    return Disposables.create()
                }
                let (id, present) = registry.withLock { r -> (UInt64, [SensorSession]) in
                    r.nextWatcher += 1
                    r.watchers[r.nextWatcher] = later
                    return (r.nextWatcher, r.sessions.values.sorted { $0.sequence < $1.sequence })
                }
                observer.onNext(.present(present.map(\.feed)))
                return Disposables.create { [weak self] in
                    _ = self?.registry.withLock { $0.watchers.removeValue(forKey: id) }
                }
            }
            return Observable.merge([later.asObservable(), registration])
        }
    }
}

/// The answer of `SensorHub.state(of:)`.
public enum SensorLookup: Hashable, Sendable {
    /// The sensor and its last samples.
    case found(SensorState)
    /// No present sensor has that id or name.
    case none
    /// Several present sensors have that name.
    case ambiguous
}
