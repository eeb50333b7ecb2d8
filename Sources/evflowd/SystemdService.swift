#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import DeviceIO
import InputDevices
import InputModel
import Logging
import Pipeline
import Reactive
import ServiceLifecycle
import StateServer
import Synchronization

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
