// evflow-sensors-probe: SensorMonitor.sensors on the input loop, every sensor's samples
// subscribed, one line per event on stdout — the process scripts/check-sensors drives under
// umockdev. A test tool, not installed (hence under Tests): it checks the Sensors module's
// discovery and reading alone, without the hub's filters, which the daemon's socket and
// D-Bus checks cover.
//
//   added <sysname> <id> <name> buffered|polled <channel>[<unit>] …
//   sample <sysname> <time ns> <channel>=<value> …
//   removed <sysname>
//   error <sysname> <message>
//   ready                       (udev is being monitored: hot-plugs from now on are seen)
//   stopped                     (after SIGTERM or SIGINT, every reading stopped)
//
// Usage: evflow-sensors-probe [--poll-ms N] [--no-buffer]
import DeviceIO
import InputModel
import Reactive
import Sensors
#if canImport(Glibc)
import Glibc
#endif

/// The probe's body, outside main.swift: top-level code there is main-actor isolated, and
/// its closures, called on the input thread, would trap on the actor check.
enum SensorsProbe {
    static func main() -> Never {
        // SIGTERM and SIGINT are taken by sigwait below: blocked before any thread starts, so every
        // thread inherits the mask and none dies of them.
        var mask = sigset_t()
        sigemptyset(&mask)
        sigaddset(&mask, SIGTERM)
        sigaddset(&mask, SIGINT)
        pthread_sigmask(SIG_BLOCK, &mask, nil)
        var options = SensorMonitor.Options()
        var arguments = CommandLine.arguments.dropFirst()
        while let argument = arguments.popFirst() {
            switch argument {
            case "--poll-ms":
                guard let text = arguments.popFirst(), let ms = Int(text), ms > 0 else {
                    emit("evflow-sensors-probe: --poll-ms needs a positive number", to: 2)
                    exit(64)
                }
                options.pollInterval = .milliseconds(ms)
            case "--no-buffer":
                options.preferBuffer = false
            default:
                emit("usage: evflow-sensors-probe [--poll-ms N] [--no-buffer]", to: 2)
                exit(64)
            }
        }

        let loop: InputLoop
        let thread: SensorThread
        do {
            loop = try InputLoop(name: "evflow.input")
            thread = try SensorThread(delivery: loop)
        } catch {
            emit("evflow-sensors-probe: \(error)", to: 2)
            exit(71)
        }
        let monitor = SensorMonitor(loop: loop, thread: thread, options: options)
        let subscription = monitor.sensors.subscribe(onNext: { stream in
            let info = stream.info
            let channels = info.channels.map { "\($0.name)[\($0.unit)]" }.joined(separator: " ")
            emit("added \(info.sysname) \(info.id) \(info.name) \(info.buffered ? "buffered" : "polled") \(channels)")
            // Owned by the sensor's lifetime: it ends when the samples complete.
            _ = stream.samples.subscribe(onNext: { sample in
                let values = zip(info.channels, sample.values).map { "\($0.name)=\(format($1))" }.joined(separator: " ")
                emit("sample \(info.sysname) \(sample.time) \(values)")
            }, onError: { error in
                emit("error \(info.sysname) \(error)")
            }, onCompleted: {
                emit("removed \(info.sysname)")
            })
        }, onError: { error in
            emit("evflow-sensors-probe: \(error)", to: 2)
            exit(69)
        })

        // The subscription's set-up (udev monitor, enumeration) was queued on the loop before this
        // job: once it has run, a sensor added from now on is seen through its uevent.
        loop.sync { emit("ready") }
        var received: Int32 = 0
        sigwait(&mask, &received)
        // Stops monitoring: every reading stops (buffers off, settings restored) before exit.
        loop.sync { subscription.dispose() }
        thread.shutdown(waitingUpTo: .seconds(1))
        emit("stopped")
        exit(0)
    }

    /// One line to `fd` in one write: unbuffered, so the check reads each line as it happens.
    static func emit(_ line: String, to fd: Int32 = 1) {
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }

    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }
}
