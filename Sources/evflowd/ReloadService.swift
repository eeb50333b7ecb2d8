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
