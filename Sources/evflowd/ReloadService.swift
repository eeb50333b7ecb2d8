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

/// SIGHUP: reload the configuration without losing device state.
///
/// SIGHUP has one path (`HangupSignal`, installed first thing in `main`): its handler adds one
/// to an eventfd, which this service watches on the input loop (`SignalCounter.watch(on:)`).
/// SIGHUPs that come during a reload, or before the service is up, coalesce into one more
/// reload. The file is read on a thread of its own: reading can block (a FIFO at the path
/// blocks in open() until a writer comes), and a reload in progress must not hold up shutdown
/// — the service stops waiting for the read at graceful shutdown (or cancellation), and a read
/// that is still blocked ends with the process.
struct ReloadService: Service {
    let hub: DeviceHub
    let configPath: String?
    /// The process's SIGHUP counter (`HangupSignal.counter`); nil if none could be made.
    let hangups: SignalCounter?
    /// The loop that watches `hangups` (the input loop).
    let loop: InputLoop
    let logger: Logger

    func run() async throws {
        guard let hangups else {
            logger.error("SIGHUP cannot reload the configuration: no eventfd for it at start; restart to apply a new one")
            try? await gracefulShutdown()
            return
        }
        for await taken in hangups.watch(on: loop).cancelOnGracefulShutdown() {
            await reload(early: taken.beforeWatch)
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
