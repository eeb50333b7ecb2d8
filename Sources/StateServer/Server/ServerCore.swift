#if canImport(Glibc)
import Glibc
#endif
import EvflowProtocol
import InputModel
import Logging
import NIOCore
import Pipeline
import Reactive
import Synchronization

/// What the clients share: the hub, the configuration, the client registry and counters.
final class ServerCore: @unchecked Sendable {
    let configuration: StateServerConfiguration
    let hub: DeviceHub
    let logger: Logger
    let names = EventNameCache.standard
    /// `FRAME` encoders shared by the watches of one shape.
    let frameEncoders: SharedFrameEncoders
    let startTime = monotonicNow()
    /// Root and the server's own uid are always allowed; tests turn this off to be refused.
    let trustRootAndSelf: Bool
    /// Who sees key codes (decided per client at admission).
    let keyAccess: KeyAccess

    private struct Registry {
        var clients: [UInt64: (client: ClientConnection, uid: UInt32?)] = [:]
        /// Clients connected per peer uid.
        var perUID: [UInt32: Int] = [:]
        var closed: [CloseReason: UInt64] = [:]
    }
    private let registry = PosixLocked(Registry())
    private let nextNumber = Atomic<UInt64>(1)
    let droppedClients = Atomic<Int>(0)
    let clientCount = Atomic<Int>(0)
    /// The client count after each accepted connection and each disconnection.
    let clientCountChanges = PublishSubject<Int>()
    let watcherCount = Atomic<Int>(0)
    /// Bytes the kernel has taken from every client's socket (written per flush, not per frame).
    let bytesSent = Atomic<UInt64>(0)
    /// The live source's counters for `METRICS`; nil in replay.
    let sourceStatistics: (@Sendable () -> SourceStatistics)?
    private let metrics = MetricsExporter()
    /// The server's one event loop: every client's channel, and the state below, live on it.
    let eventLoop: EventLoop
    /// The clock of the idle limits and the slow-consumer grace (the event loop's; a test's own).
    let timers: any ServerTimers
    /// Ages at the `sent` stage; written and read on the event loop (checked on each use).
    private let sentLatency: NIOLoopBoundBox<LatencyHistogram>
    /// The clock `sent` ages are read on: the hub's scheduler's, unless it is virtual (a socket
    /// write has no virtual time: then `sent` is not measured).
    private let sentClock: SchedulerType?

    init(configuration: StateServerConfiguration, hub: DeviceHub, logger: Logger, trustRootAndSelf: Bool,
         eventLoop: EventLoop, timers: any ServerTimers = EventLoopTimers(),
         sourceStatistics: (@Sendable () -> SourceStatistics)? = nil) {
        self.eventLoop = eventLoop
        self.timers = timers
        frameEncoders = SharedFrameEncoders(names: names)
        sentLatency = .makeBoxSendingValue(LatencyHistogram(), eventLoop: eventLoop)
        draining = .makeBoxSendingValue([], eventLoop: eventLoop)
        self.configuration = configuration
        self.hub = hub
        self.logger = logger
        self.trustRootAndSelf = trustRootAndSelf
        keyAccess = KeyAccess(configuration: configuration, trustRootAndSelf: trustRootAndSelf)
        self.sourceStatistics = sourceStatistics
        sentClock = hub.scheduler is VirtualTimeScheduler ? nil : hub.scheduler
    }

    /// Records a batch's `sent` age (event loop): the oldest frame in it, as it is written.
    func recordSent(oldestFrame: Int64?) {
        guard let oldestFrame, let clock = sentClock else { return }
        sentLatency.value.record(clock.now - oldestFrame)
    }

    /// `LATENCY` without `sent`: the hub's ages, taken on its scheduler; `completion` runs there.
    func latencyReport(_ completion: @escaping @Sendable (LatencyReport) -> Void) {
        hub.latency { hubLatency in
            completion(LatencyReport(clock: hubLatency.clock, total: hubLatency.total.mapValues(\.summary),
                                     devices: hubLatency.devices))
        }
    }

    /// The `sent` stage's summary (event loop); nil when `sent` is not measured (virtual time).
    var sentSummary: LatencySummary? { sentClock == nil ? nil : sentLatency.value.summary }

    func makeNumber() -> UInt64 { nextNumber.add(1, ordering: .relaxed).oldValue }

    // MARK: - Clients

    /// Whether a peer may connect (docs/protocol.md §7).
    func permits(_ peer: PeerCredentials?) -> Bool {
        let c = configuration
        if c.allowedUIDs.isEmpty && c.allowedGIDs.isEmpty { return true }
        guard let peer else { return false }
        if trustRootAndSelf && (peer.uid == 0 || peer.uid == getuid()) { return true }
        if c.allowedUIDs.contains(peer.uid) || c.allowedGIDs.contains(peer.gid) { return true }
        return peer.groups.contains { c.allowedGIDs.contains($0) }
    }

    /// What `register` decided.
    enum Admission {
        case accepted
        /// `maxClients` are connected.
        case serverFull
        /// `maxClientsPerUser` clients of this uid are connected.
        case userFull
    }

    /// Adds a client unless a limit is reached.
    func register(_ client: ClientConnection, uid: UInt32?) -> Admission {
        let admission = registry.withLock { r -> Admission in
            guard r.clients.count < configuration.maxClients else { return .serverFull }
            if let uid {
                guard r.perUID[uid, default: 0] < configuration.maxClientsPerUser else { return .userFull }
                r.perUID[uid, default: 0] += 1
            }
            r.clients[client.number] = (client, uid)
            return .accepted
        }
        if admission == .accepted {
            let count = clientCount.add(1, ordering: .relaxed).newValue
            clientCountChanges.onNext(count)
            logger.debug("client connected", metadata: ["client": "\(client.number)"])
        }
        return admission
    }

    func unregister(_ client: ClientConnection) {
        let removed = registry.withLock { r -> Bool in
            guard let (_, uid) = r.clients.removeValue(forKey: client.number) else { return false }
            if let uid {
                r.perUID[uid, default: 1] -= 1
                if r.perUID[uid] == 0 { r.perUID[uid] = nil }
            }
            return true
        }
        if removed {
            let count = clientCount.subtract(1, ordering: .relaxed).newValue
            clientCountChanges.onNext(count)
            logger.debug("client disconnected", metadata: ["client": "\(client.number)"])
        }
        watchersChanged()
    }

    func recordClose(_ reason: CloseReason, client: UInt64, message: String) {
        registry.withLock { $0.closed[reason, default: 0] += 1 }
        if reason == .slowConsumer { droppedClients.add(1, ordering: .relaxed) }
        let level: Logger.Level = reason == .shutdown ? .debug : .notice
        logger.log(level: level, "closing client", metadata: ["client": "\(client)", "reason": "\(reason.rawValue)",
                                                              "message": "\(message)"])
    }

    func watchersChanged() {
        let n = registry.withLock { $0.clients.values.filter(\.client.isWatching).count }
        watcherCount.store(n, ordering: .relaxed)
    }

    var clients: [ClientConnection] { registry.withLock { $0.clients.values.map(\.client) } }

    // MARK: - Batched flushing

    /// Clients with queued bytes, and whether a drain job is scheduled.
    private let flushList = PosixLocked<(clients: [ClientConnection], scheduled: Bool)>(([], false))
    /// The batch being drained (event loop, checked); swapped with `flushList.clients`, so both
    /// arrays keep their capacity and queuing a client allocates nothing.
    private let draining: NIOLoopBoundBox<[ClientConnection]>

    /// Queues `client` for the next drain on the event loop; schedules the drain if none is.
    /// Every client lives on the server's single event loop, so one job serves them all.
    func requestFlush(_ client: ClientConnection) {
        let schedule = flushList.withLock { f -> Bool in
            f.clients.append(client)
            if f.scheduled { return false }
            f.scheduled = true
            return true
        }
        if schedule { eventLoop.execute { [self] in drainFlushList() } }
    }

    /// Flushes every queued client (event loop).
    private func drainFlushList() {
        flushList.withLock { f in
            swap(&draining.value, &f.clients)
            f.scheduled = false
        }
        for client in draining.value { client.flush() }
        draining.value.removeAll(keepingCapacity: true)
    }

    // MARK: - Queries

    /// `STATE`: by id first, then by exact name.
    func stateReport(for device: String) -> Result<DeviceStateReport, ProtocolError> {
        if let state = hub.store.state(of: DeviceID(rawValue: device)) { return .success(reportWithOutput(state)) }
        let named = hub.devices.filter { $0.name == device }
        guard !named.isEmpty else { return .failure(ProtocolError(.unknownDevice(device))) }
        guard named.count == 1 else { return .failure(ProtocolError(.ambiguousDevice(device))) }
        guard let state = hub.store.state(of: named[0].id) else { return .failure(ProtocolError(.unknownDevice(device))) }
        return .success(reportWithOutput(state))
    }

    private func reportWithOutput(_ state: DeviceState) -> DeviceStateReport {
        var report = Self.report(state)
        report.device = withOutput(report.device)
        return report
    }

    /// `device` with its `output` (DEVICES, STATE; protocol 1.3), `gestures` (1.5) and `battery` (1.8).
    func withOutput(_ device: DeviceInfo) -> DeviceInfo {
        var device = device
        device.output = hub.outputStatus(of: device.id)
        device.gestures = hub.gestures(of: device.id)
        device.battery = hub.battery(of: device.id)
        return device
    }

    /// A store snapshot in the protocol's terms: switches and LEDs as values per supported code.
    static func report(_ s: DeviceState) -> DeviceStateReport {
        func values(_ type: UInt16, on: [UInt16]) -> [UInt16: Int32] {
            var v: [UInt16: Int32] = [:]
            for code in s.info.capabilities[type] ?? [] { v[code] = 0 }
            for code in on { v[code] = 1 }
            return v
        }
        let c = s.counters
        let counters = DeviceCounters(framesIn: c.framesIn, eventsIn: c.eventsIn, framesOut: c.framesOut,
                                      eventsOut: c.eventsOut, synDropped: c.synDropped, mscDropped: c.mscDropped,
                                      droppedByFilter: droppedByFilter(c), chatterByKey: c.chatterByKey.byCode)
        return DeviceStateReport(device: s.info, keysDown: s.keysDown, abs: s.absolute,
                                 switches: values(EventType.sw, on: s.switchesOn),
                                 leds: values(EventType.led, on: s.ledsOn),
                                 lastEventTime: s.lastEventTime, counters: counters)
    }

    /// Dropped events per filter name.
    static func droppedByFilter(_ c: Pipeline.DeviceCounters) -> [String: UInt64] {
        var d: [String: UInt64] = [:]
        for (kind, counts) in c.filters { d[kind.rawValue] = counts.dropped }   // the filters that counted
        return d
    }

    /// `METRICS`: the exposition text (Prometheus text format 0.0.4), with `latency`'s totals.
    func metricsText(latency: LatencyReport? = nil) -> String {
        let states = hub.store.states()
        let (clients, closed) = registry.withLock { r in (r.clients.values.map(\.client), r.closed) }
        let watching = clients.filter(\.isWatching).count
        let snapshot = MetricsSnapshot(
            devices: states.map { ($0.info, $0.counters) },
            clientsWatching: watching, clientsIdle: clients.count - watching, closed: closed,
            bytesSent: bytesSent.load(ordering: .relaxed), liveResources: LiveResources.count,
            uptime: Double(monotonicNow() - startTime) / 1e9, release: configuration.release,
            source: sourceStatistics?(), latency: latency, sensors: hub.sensors.states)
        return metrics.export(snapshot)
    }

    /// `STATS`.
    func stats() -> ServerStats {
        let states = hub.store.states()
        var dropped: [String: UInt64] = [:]
        var perDevice: [DeviceID: [String: UInt64]] = [:]
        for s in states {
            let d = Self.droppedByFilter(s.counters)
            perDevice[s.info.id] = d
            for (k, v) in d { dropped[k, default: 0] += v }
        }
        let (list, closed) = registry.withLock { r in (r.clients.values.map(\.client), r.closed) }
        let clientList = list.map { c -> ClientStats in
            let m = c.meta.withLock { $0 }
            return ClientStats(client: c.number, pid: m.pid, uid: m.uid, tag: m.tag, stream: m.stream,
                               sent: c.sent.load(ordering: .relaxed), dropped: c.rateDropped.load(ordering: .relaxed),
                               buffered: c.bufferedByteCount)
        }
        let now = monotonicNow()
        var stats = ServerStats(release: configuration.release, uptime: Double(now - startTime) / 1e9, now: now,
                                devices: states.count, clients: list.count,
                                watchers: clientList.filter { $0.stream != nil }.count,
                                liveResources: LiveResources.count, droppedByFilter: dropped, closed: closed,
                                clientList: clientList)
        stats.deviceDropped = perDevice
        for s in states where hub.outputStatus(of: s.info.id)?.mode == .virtual {
            if let counters = hub.outputCounters(of: s.info.id) { stats.deviceOutput[s.info.id] = counters }
        }
        stats.spuriousRelease = hub.spuriousReleaseCodes.mapValues { codes in
            codes.map { EventNames.codeText(type: EventType.key, code: $0) }
        }
        return stats
    }
}
