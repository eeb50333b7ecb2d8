import EvflowProtocol
import Foundation
import Reactive

/// The running bridge: evflowd's socket and the broker, each reconnected with backoff by the
/// reactive core's `retry(when:)`, feeding one `BridgeCore` on one serial queue.
///
/// Threads (docs/mqtt.md, "Threads"): the bridge queue (all logic and timers); one reader
/// thread per evflowd connection (the main one, the gestures one and one per event stream); libmosquitto's
/// network thread per broker session (`mosquitto_loop_start`); a teardown queue that joins it.
public final class Bridge: @unchecked Sendable {
    public let core: BridgeCore
    public let scheduler: SerialDispatchQueueScheduler
    private let socketPath: String
    private let broker: BrokerOptions
    private let streams: [EventStreamSpec]
    private let backoff: ExponentialBackoff
    private let log: @Sendable (String) -> Void
    private let subscriptions = CompositeDisposable()
    private var brokerConnection: BrokerConnection?

    public init(socketPath: String, broker: BrokerOptions, settings: BridgeSettings, streams: [EventStreamSpec],
                backoff: ExponentialBackoff, log: @escaping @Sendable (String) -> Void) {
        self.socketPath = socketPath
        var b = broker
        b.willTopic = settings.layout.bridgeAvailability
        self.broker = b
        self.streams = streams
        self.backoff = backoff
        self.log = log
        scheduler = SerialDispatchQueueScheduler(label: "evflow-mqtt bridge")
        core = BridgeCore(settings: settings, scheduler: scheduler, log: log)
    }

    /// Subscribes everything; returns at once.
    public func start() {
        scheduler.queue.async { [self] in
            let core = self.core
            let log = self.log
            let b = self.broker
            _ = subscriptions.insert(
                reconnecting(brokerSession(b), backoff: backoff, scheduler: scheduler, isConnected: { _ in true },
                             lost: { [weak self] error, delay in
                                 self?.brokerConnection = nil
                                 core.brokerLost()
                                 log("\(error) — retrying in \(delay)")
                             })
                .subscribe(onNext: { [weak self] c in
                    log("connected to the broker at \(b.host):\(b.port) (MQTT \(b.protocolVersion.rawValue))")
                    self?.brokerConnection = c
                    core.brokerConnected(c)
                }))
            _ = subscriptions.insert(
                reconnecting(daemonLink(socketPath: socketPath), backoff: backoff, scheduler: scheduler,
                             isConnected: { if case .connected = $0 { return true } else { return false } },
                             lost: { error, delay in
                                 core.daemonLost("\(error)")
                                 log("\(error) — retrying in \(delay)")
                             })
                .subscribe(onNext: { event in
                    switch event {
                    case .connected(let c, let release, let keys):
                        log("connected to evflowd \(release) at \(self.socketPath)")
                        core.daemonConnected(c, keys: keys)
                    case .message(let m):
                        core.daemonMessage(m)
                    }
                }))
            for spec in streams {
                let watch = EventStreamWatch(Request(.watch(spec.watch), tag: .string("evflow-mqtt events")),
                                             every: core.settings.refreshInterval, scheduler: scheduler)
                watchOnItsOwnConnection(watch) { message in
                    switch message {
                    case .frame(let f):
                        core.eventFrame(f, spec: spec)
                    case .error(let e):
                        switch watch.refused(e) {
                        case .first: log("evflowd refused the event stream '\(spec.text)': \(e.message) — asking again every \(core.settings.refreshInterval)")
                        case .again: break
                        case .final: log("evflowd refused the event stream '\(spec.text)': \(e.message)")
                        }
                    default:
                        break
                    }
                }
            }
            if core.settings.gestures {
                // The gestures of every device (docs/mqtt.md, "Gestures"), on a connection of
                // their own: a connection has one WATCH, and the main one watches frames.
                let watch = EventStreamWatch(Request(.watch(WatchRequest(stream: .gestures)), tag: .string("evflow-mqtt gestures")),
                                             every: core.settings.refreshInterval, scheduler: scheduler)
                watchOnItsOwnConnection(watch) { message in
                    switch message {
                    case .gesture(let g): core.gestureArrived(g)
                    case .error(let e): log("evflowd refused the gestures stream: \(e.message)")
                    default: break
                    }
                }
            }
            _ = subscriptions.insert(Observable<Int>.interval(core.settings.refreshInterval, scheduler: scheduler)
                .subscribe(onNext: { _ in core.refreshAll() }))
            _ = subscriptions.insert(Observable<Int>.interval(core.settings.statsInterval, scheduler: scheduler)
                .subscribe(onNext: { _ in core.publishStats() }))
        }
    }

    /// A WATCH on an evflowd connection of its own (a connection has one WATCH), reconnected
    /// with backoff and asked again on every connection; `handle` gets its messages. On the
    /// bridge queue.
    private func watchOnItsOwnConnection(_ watch: EventStreamWatch, _ handle: @escaping (ServerMessage) -> Void) {
        _ = subscriptions.insert(watch.retry)
        _ = subscriptions.insert(
            reconnecting(daemonLink(socketPath: socketPath), backoff: backoff, scheduler: scheduler,
                         isConnected: { if case .connected = $0 { return true } else { return false } },
                         lost: { _, _ in })
            .subscribe(onNext: { event in
                switch event {
                case .connected(let c, _, _): watch.connected(c)
                case .message(let m): handle(m)
                }
            }))
    }

    /// Announces both availabilities offline (waiting up to `flushTimeout` for the broker to
    /// acknowledge), then disposes every subscription: sockets closed, libmosquitto torn down.
    public func stop(flushTimeout: Double = 2) {
        let connection: BrokerConnection? = scheduler.queue.sync {
            core.stopping()
            return brokerConnection
        }
        if let connection {
            let target = scheduler.queue.sync { core.published }
            let deadline = Date().addingTimeInterval(flushTimeout)
            while connection.completed.load(ordering: .relaxed) < target && Date() < deadline { usleep(10_000) }
        }
        scheduler.queue.sync { subscriptions.dispose() }
    }
}

/// `source`, resubscribed after every error with an exponential backoff that starts afresh
/// once an attempt reports `isConnected` (so a broker that was up for an hour is retried
/// quickly, and one that keeps refusing is retried ever more slowly, never in a tight loop).
/// `lost` hears each error and the delay before the next attempt. Everything runs on `scheduler`.
public func reconnecting<E>(_ source: Observable<E>, backoff: ExponentialBackoff, scheduler: SchedulerType,
                            isConnected: @escaping (E) -> Bool,
                            lost: @escaping (any Error, RxTimeInterval) -> Void) -> Observable<E> {
    Observable.deferred {
        let failures = FailureCount()
        return source
            .observeOn(scheduler)
            .do(onNext: { if isConnected($0) { failures.value = 0 } })
            .retry(when: { (errors: Observable<any Error>) -> Observable<Int> in
                errors.flatMap { error -> Observable<Int> in
                    failures.value += 1
                    let delay = backoff.delay(beforeRetry: failures.value)
                    lost(error, delay)
                    return Observable<Int>.timer(delay, scheduler: scheduler)
                }
            })
    }
}

/// Failed attempts since the last connection; touched only on the bridge scheduler.
final class FailureCount: @unchecked Sendable {
    var value = 0
}

/// One event stream's `WATCH` on its connection to evflowd: sent when the connection is made,
/// and, while evflowd refuses it because an id or a name in `devices` is no device it has
/// (not plugged in yet: protocol.md §4 WATCH), sent again every `interval` until it is
/// accepted, as it used to be accepted at once and wait for the device. Other refusals are
/// final. On the bridge queue.
final class EventStreamWatch: @unchecked Sendable {
    /// How a refusal is taken.
    enum Refusal { case first, again, final }

    let request: Request
    let interval: RxTimeInterval
    let scheduler: SchedulerType
    /// The pending resend (owned by the bridge's subscriptions, so stopping cancels it).
    let retry = SerialDisposable()
    private var connection: DaemonRequester?
    private var refusals = 0

    init(_ request: Request, every interval: RxTimeInterval, scheduler: SchedulerType) {
        self.request = request
        self.interval = interval
        self.scheduler = scheduler
    }

    /// A new connection: the request goes out on it.
    func connected(_ c: DaemonRequester) {
        connection = c
        refusals = 0
        retry.disposable = Disposables.create()
        _ = c.send(request)
    }

    /// evflowd answered the request with `error`: a `devices` refusal schedules the next try
    /// on the same connection (`first` the first time on it, to be logged; `again` after).
    func refused(_ error: ErrorReply) -> Refusal {
        guard error.field == "devices", let c = connection else { return .final }
        refusals += 1
        retry.disposable = scheduler.schedule(after: interval) { [weak self, weak c] in
            guard let self, let c, self.connection === c else { return }
            _ = c.send(self.request)
        }
        return refusals == 1 ? .first : .again
    }
}
