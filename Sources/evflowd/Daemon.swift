#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import InputDevices
import InputModel
import Logging
import Pipeline
import Reactive
import ServiceLifecycle
import StateServer
import Synchronization
import UnixSignals

/// The running daemon: its services, started in order (input, server, systemd, reload, sleep)
/// and shut down in reverse on SIGTERM/SIGINT.
struct Daemon: Sendable {
    let logger: Logger
    let options: DaemonOptions
    let source: InputSource
    let hub: DeviceHub
    let server: StateServer
    let inputScheduler: InputLoop
    /// Whether to serve `net.hadess.SensorProxy` (the configuration's `sensor_proxy`).
    var sensorProxy = false

    func run() async throws {
        let inputReady = Latch()
        let serverReady = Latch()
        let input = InputService(source: source, hub: hub, scheduler: inputScheduler, ready: inputReady, logger: logger)
        let serverService = ServerService(server: server, after: inputReady, ready: serverReady, logger: logger,
                                          socketPath: options.socketPath)
        let systemd = SystemdService(hub: hub, server: server, inputScheduler: inputScheduler, after: serverReady,
                                     logger: logger)
        let reload = ReloadService(hub: hub, configPath: options.configPath, logger: logger)
        let sleep = SleepService(hub: hub, inputScheduler: inputScheduler, after: inputReady, logger: logger)
        var services: [ServiceGroupConfiguration.ServiceConfiguration] = [
            .init(service: input, serviceName: "input"),
            .init(service: serverService, serviceName: "server"),
            .init(service: systemd, serviceName: "systemd"),
            .init(service: reload, serviceName: "reload"),
            .init(service: sleep, serviceName: "sleep"),
        ]
        // `sensor_proxy: true`: iio-sensor-proxy's D-Bus API (docs/sensors.md); stopped first.
        if sensorProxy {
            services.append(.init(service: SensorProxyService(sensors: hub.sensors, inputScheduler: inputScheduler,
                                                              after: inputReady, logger: logger),
                                  serviceName: "sensor-proxy"))
        }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: services,
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        logger.info("evflowd \(Evflowd.release) starting: \(source.description)")
        defer { inputScheduler.shutdown() }
        try await group.run()
        logger.info("evflowd stopped")
    }
}

/// A one-shot readiness signal awaited by later services.
final class Latch: Sendable {
    private enum Waiter {
        case cancellable(CheckedContinuation<Bool, Never>)
        case uncancellable(CheckedContinuation<Void, Never>)
    }

    private struct State {
        var open = false
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiter: UInt64 = 0

        mutating func add(_ waiter: Waiter) -> UInt64 {
            nextWaiter += 1
            waiters[nextWaiter] = waiter
            return nextWaiter
        }
    }

    private let state = Mutex(State())

    func open() {
        let waiters = state.withLock { s -> [Waiter] in
            s.open = true
            defer { s.waiters = [:] }
            return Array(s.waiters.values)
        }
        for waiter in waiters {
            switch waiter {
            case .cancellable(let c): c.resume(returning: true)
            case .uncancellable(let c): c.resume()
            }
        }
    }

    /// Waits until the latch opens (true) or the task is cancelled first (false): a service
    /// waiting for an earlier one that failed must not wait for ever (the group cancels it).
    func wait() async -> Bool {
        let id = Mutex<UInt64?>(nil)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                let now = state.withLock { s -> Bool? in
                    if s.open { return true }
                    if Task.isCancelled { return false }
                    id.withLock { $0 = s.add(.cancellable(c)) }
                    return nil
                }
                if let now { c.resume(returning: now) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> Waiter? in
                guard let key = id.withLock({ $0 }) else { return nil }
                return s.waiters.removeValue(forKey: key)
            }
            if case .cancellable(let c) = waiter { c.resume(returning: false) }
        }
    }

    /// Waits until the latch opens, cancelled or not (for work that must finish, e.g. the
    /// disposal of every device session on the input thread).
    func opened() async {
        await withCheckedContinuation { (c: CheckedContinuation<Void, Never>) in
            let now = state.withLock { s -> Bool in
                if s.open { return true }
                _ = s.add(.uncancellable(c))
                return false
            }
            if now { c.resume() }
        }
    }
}

/// Feeds the hub from the input source; ready once the first enumeration is done; on
/// shutdown disposes every device session (readers stop, fds close, streams complete). A
/// failure of the source fails the service — and so the daemon, with exit code 71 — at start
/// (before READY) or later: the daemon never runs on without its input.
struct InputService: Service {
    let source: InputSource
    let hub: DeviceHub
    let scheduler: InputLoop
    let ready: Latch
    let logger: Logger

    func run() async throws {
        let baseline = LiveResources.count
        let logger = self.logger
        let notices = hub.spuriousNotices.subscribe(onNext: { notice in
            logger.notice("spurious-release debounce turned on for \(EventNames.codeText(type: EventType.key, code: notice.code)) of \(notice.device.id) (\(notice.device.name)): a release was followed by a re-press that stayed down; releases of this code are now held for the spurious window")
        })
        let outputNotices = hub.outputNotices.subscribe(onNext: { notice in
            logger.notice("\(notice.device.id) (\(notice.device.name)): \(notice.message)")
        })
        let failure = Mutex<(any Error)?>(nil)
        let stop = Latch()   // opened by a failure of the source, or at shutdown
        // The device count when the input became ready, read on the input thread then (read
        // later, from here, it raced the replay's start: 0 or 1 for the same file).
        let enumerated = Latch()
        let present = Atomic<Int>(0)
        let hub = self.hub
        let sourceReady = source.ready?.take(1).subscribe(onNext: {
            present.store(hub.deviceCount, ordering: .relaxed)
            enumerated.open()
        })
        let subscription = hub.run(source.devices, onError: { error in
            failure.withLock { $0 = error }
            stop.open()
            enumerated.open()
        })
        let sensorSubscription = hub.sensors.run(source.sensors, onError: { error in
            failure.withLock { $0 = error }
            stop.open()
        })
        // The hub subscribes the source on the input scheduler, which enumerates there: a job
        // scheduled after it runs once the present devices are known (or the source failed).
        // A replay announces its first devices one job later, and says when (`ready`).
        if sourceReady == nil {
            scheduler.schedule {
                present.store(hub.deviceCount, ordering: .relaxed)
                enumerated.open()
            }
        }
        // A SIGTERM before the input is ready ends the wait (a replay's burst of 200,000
        // hot-plug steps at time 0 kept it for 24 s, and SIGTERM waited: issue #34); the
        // later services, waiting for this one, stop first.
        let enumeratedInTime = await cancelWhenGracefulShutdown { await enumerated.wait() }
        sourceReady?.dispose()
        if let error = failure.withLock({ $0 }) {
            notices.dispose()
            outputNotices.dispose()
            throw StartupError.input("input source failed: \(error)")
        }
        if enumeratedInTime {
            let count = present.load(ordering: .relaxed)
            logger.info("input ready: \(count) device\(count == 1 ? "" : "s")\(source.readyNote)")
            ready.open()
            // Until shutdown, or until the source fails.
            await cancelWhenGracefulShutdown {
                await withTaskCancellationHandler { await stop.opened() } onCancel: { stop.open() }
            }
        } else {
            logger.notice("stopping before the input was ready")
        }
        let finished = Latch()
        scheduler.schedule {
            subscription.dispose()
            sensorSubscription.dispose()
            notices.dispose()
            outputNotices.dispose()
            finished.open()
        }
        await finished.opened()
        if let error = failure.withLock({ $0 }) {
            throw StartupError.input("input source failed: \(error)")
        }
        logger.info("input stopped: all device sessions disposed",
                    metadata: ["live_resources": "\(LiveResources.count)", "before_start": "\(baseline)"])
        withExtendedLifetime(source.retain) {}
    }
}

/// Runs the state server; removes its socket file on shutdown.
struct ServerService: Service {
    let server: StateServer
    let after: Latch
    let ready: Latch
    let logger: Logger
    let socketPath: String

    func run() async throws {
        // The input service failed, or a SIGTERM came before it was ready.
        guard await cancelWhenGracefulShutdown({ await after.wait() }) else { return }
        try await server.start()
        logger.info("listening on \(socketPath)")
        ready.open()
        try? await gracefulShutdown()
        await server.shutdown()
    }
}

/// READY=1 once devices are enumerated and the socket listens, WATCHDOG=1 at half the
/// watchdog timeout, STATUS= with the device and client counts whenever one changes,
/// STOPPING=1 on shutdown. Nothing else is timed: without a watchdog, an idle daemon sleeps.
///
/// A ping proves the daemon works, not only that this task runs: before each one, a job must
/// have run on the input thread and then on the socket server's event loop. A stuck input
/// thread or event loop therefore stops the pings, and systemd restarts the service.
struct SystemdService: Service {
    let hub: DeviceHub
    let server: StateServer
    let inputScheduler: InputLoop
    let after: Latch
    let logger: Logger

    /// Sleeps on the input loop's timer; false if cancelled first. Not `Task.sleep`: a delayed
    /// job goes to libdispatch (NIO runs the executor's jobs, not its timers), whose first
    /// worker thread starts a once-a-second monitor of its pool that never stops — an idle
    /// daemon would wake every second, not once per ping (docs/benchmarks.md, I1).
    func sleepOnInputLoop(_ duration: Duration) async -> Bool {
        let interval = RxTimeInterval(clamping: duration)
        let timer = PosixLocked<(continuation: CheckedContinuation<Bool, Never>?, timer: Disposable?, cancelled: Bool)>(
            (nil, nil, false))
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                let cancelled = timer.withLock { state -> Bool in
                    state.continuation = c
                    return state.cancelled
                }
                if cancelled { return c.resume(returning: false) }
                let disposable = inputScheduler.schedule(after: interval) {
                    timer.withLock { state in
                        defer { state.continuation = nil }
                        return state.continuation
                    }?.resume(returning: true)
                }
                timer.withLock { $0.timer = disposable }
            }
        } onCancel: {
            let (continuation, disposable) = timer.withLock { state in
                state.cancelled = true
                defer { state.continuation = nil }
                return (state.continuation, state.timer)
            }
            disposable?.dispose()
            continuation?.resume(returning: false)
        }
    }

    /// A job through the input thread, then one through the event loop; false if cancelled.
    func roundTrip() async -> Bool {
        let input = Latch()
        inputScheduler.schedule { input.open() }
        guard await input.wait() else { return false }
        if Task.isCancelled { return false }
        do {
            try await server.roundTrip()
            return true
        } catch {
            return false
        }
    }

    func status() -> String {
        let devices = hub.deviceCount, clients = server.clientCount
        return "\(devices) device\(devices == 1 ? "" : "s"), \(clients) client\(clients == 1 ? "" : "s")"
    }

    func run() async throws {
        // An earlier service failed, or a SIGTERM came before they were up.
        guard await cancelWhenGracefulShutdown({ await after.wait() }) else { return }
        let notifier = SystemdNotifier()
        do {
            try notifier.ready(status: status())
        } catch {
            logger.warning("sd_notify READY failed: \(error)")
        }
        let ping = (try? SystemdNotifier.watchdogPingInterval()) ?? nil
        // STATUS= follows the device and client counts as they change (no polling: an idle
        // daemon does not wake up); the counts' streams only signal, the status is built here.
        let (changes, signal) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        let subscriptions = CompositeDisposable()
        _ = subscriptions.insert(hub.deviceCountChanges.subscribe(onNext: { _ in signal.yield() }))
        _ = subscriptions.insert(server.clientCountChanges.subscribe(onNext: { _ in signal.yield() }))
        defer {
            subscriptions.dispose()
            signal.finish()
        }
        await withDiscardingTaskGroup { group in
            group.addTask {
                var lastStatus = ""
                for await _ in changes.cancelOnGracefulShutdown() {
                    let s = status()
                    if s != lastStatus {
                        _ = try? notifier.status(s)
                        lastStatus = s
                    }
                }
            }
            // The watchdog's keep-alive, at half its timeout (systemd's advice) and no faster.
            if let ping {
                group.addTask {
                    while !Task.isCancelled {
                        // Cancelled at graceful shutdown: the sleep ends early with false.
                        guard await cancelWhenGracefulShutdown({ await sleepOnInputLoop(ping) }) else {
                            break
                        }
                        if await roundTrip() { _ = try? notifier.watchdog() }
                        if Task.isShuttingDownGracefully { break }
                    }
                }
            }
            try? await gracefulShutdown()
            group.cancelAll()
        }
        _ = try? notifier.stopping()
    }
}

/// SIGHUP: reload the configuration without losing device state.
///
/// The file is read on a thread of its own: reading can block (a FIFO at the path blocks in
/// open() until a writer comes), and a reload in progress must not hold up shutdown — the
/// service stops waiting for the read at graceful shutdown (or cancellation), and a read that
/// is still blocked ends with the process. A SIGHUP that came before the service was up
/// (`EarlySIGHUP`) is honoured with one reload once it is.
struct ReloadService: Service {
    let hub: DeviceHub
    let configPath: String?
    let logger: Logger

    func run() async throws {
        let signals = await UnixSignalsSequence(trapping: .sighup)
        // Trapped from here on; one that came since start was only noted.
        if EarlySIGHUP.take() { await reload(early: true) }
        for await _ in signals.cancelOnGracefulShutdown() {
            await reload(early: false)
            if Task.isShuttingDownGracefully { break }
        }
    }

    private func reload(early: Bool) async {
        let notifier = SystemdNotifier()
        _ = try? notifier.reloading()
        let path = configPath
        let outcome = PosixLocked<Result<FilterConfig, StartupError>?>(nil)
        let read = Latch()
        let started = Self.detachedThread {
            outcome.withLock { $0 = Result { () throws(StartupError) in try DaemonBuilder.loadConfig(path) } }
            read.open()
        }
        if !started {
            logger.error("reload failed, keeping the previous configuration: no thread to read it on")
            _ = try? notifier.ready()
            return
        }
        guard await cancelWhenGracefulShutdown({ await read.wait() }) else {
            logger.notice("reload abandoned: shutting down while \(path ?? "the configuration") was being read")
            return
        }
        switch outcome.withLock({ $0 }) {
        case .success(let config):
            hub.reload(config)
            logger.info("configuration reloaded\(path.map { " from \($0)" } ?? "")\(early ? " (SIGHUP during start-up)" : "")")
        case .failure(let error):
            // Typed (`StartupError` only): no failure of a reload can end the service group.
            logger.error("reload failed, keeping the previous configuration: \(error.message)")
        case nil:
            break
        }
        _ = try? notifier.ready()
    }

    /// Runs `body` on a new detached thread; false if no thread could be started.
    private static func detachedThread(_ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(ThreadBody(body))
        var handle = pthread_t()
        let rc = pthread_create(&handle, nil, { raw in
            Unmanaged<ThreadBody>.fromOpaque(raw!).takeRetainedValue().body()
            return nil
        }, box.toOpaque())
        if rc != 0 {
            box.release()
            return false
        }
        pthread_detach(handle)
        return true
    }

    private final class ThreadBody: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}

/// SIGHUP before the reload service traps it. Its default action ends the process (exit
/// 129), so `install()` runs first thing in `main`: from then on a SIGHUP only sets a flag,
/// which the reload service takes once it is up, and reloads once (the configuration read at
/// start may be older than the file the SIGHUP was about).
enum EarlySIGHUP {
    private static let seen = Atomic<Bool>(false)

    /// Installs the flag-setting handler (an atomic store: async-signal-safe).
    static func install() {
        // The flag's lazy initialisation (swift_once) must not be the handler's first access:
        // it is not async-signal-safe.
        _ = seen.load(ordering: .relaxed)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in EarlySIGHUP.seen.store(true, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGHUP, &action, nil)
    }

    /// Whether a SIGHUP came since `install()`; clears the flag.
    static func take() -> Bool { seen.exchange(false, ordering: .relaxed) }
}
