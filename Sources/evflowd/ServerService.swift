import Logging
import ServiceLifecycle
import StateServer

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
