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
        let reload = ReloadService(hub: hub, configPath: options.configPath, hangups: HangupSignal.counter,
                                   loop: inputScheduler, logger: logger)
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
        // SIGTERM/SIGINT: service-lifecycle's one path for them (a dispatch signal source);
        // SIGHUP is HangupSignal's alone.
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
