import DeviceIO
import InputDevices
import InputModel
import Logging
import Pipeline
import ServiceLifecycle

/// Suspend and resume (docs/virtual-device.md, "Suspend and resume"): logind's
/// `PrepareForSleep` (`SleepMonitor`, on the input loop) drives the hub — before a sleep the
/// twins release their keys and then the delay inhibitor is closed; after the resume the twins
/// are set to the keys down on their devices. Started once the input is ready; the monitor is
/// closed first at shutdown (the services stop in reverse), before the hub's sessions go.
/// Never fails: without a system bus or logind it says so once and waits for shutdown.
struct SleepService: Service {
    let hub: DeviceHub
    let inputScheduler: InputLoop
    let after: Latch
    let logger: Logger

    func run() async throws {
        // The input service failed, or a SIGTERM came before it was ready (a replay's burst at
        // start-up: this, the last service, is stopped first and must not wait for the input).
        guard await cancelWhenGracefulShutdown({ await after.wait() }) else { return }
        let hub = self.hub, logger = self.logger
        let monitor = SleepMonitor(loop: inputScheduler, logger: logger, willSleep: { ready in
            hub.prepareForSleep { report in
                logger.notice("\(Self.sleepLine(report))")
                ready()
            }
        }, didResume: {
            hub.resumed { report in
                for line in Self.resumeLines(report) { logger.notice("\(line)") }
            }
        })
        inputScheduler.schedule { monitor.start() }
        try? await gracefulShutdown()
        let closed = Latch()
        inputScheduler.schedule {
            monitor.close()
            closed.open()
        }
        await closed.opened()
    }

    /// The journal line before a sleep.
    static func sleepLine(_ report: SleepReport) -> String {
        let n = report.devices.count
        if n == 0 { return "before sleep: no virtual device to release" }
        let names = report.devices.map { "\($0.id) (\($0.name))" }.joined(separator: ", ")
        return "before sleep: released the keys held on \(n) virtual device\(n == 1 ? "" : "s"): \(names)"
    }

    /// The journal lines after a resume: one per device with a twin.
    static func resumeLines(_ report: SleepReport) -> [String] {
        if report.devices.isEmpty { return ["after resume: no virtual device to set"] }
        return report.devices.map { device in
            if let down = report.keysDown[device.id] {
                let keys = down.sorted().map { EventNames.codeText(type: EventType.key, code: $0) }
                return "after resume: \(device.id) (\(device.name)): virtual device set to the keys down on the device: \(keys.isEmpty ? "none" : keys.joined(separator: ", "))"
            }
            return "after resume: \(device.id) (\(device.name)): the keys down could not be read (the device is gone)"
        }
    }
}
