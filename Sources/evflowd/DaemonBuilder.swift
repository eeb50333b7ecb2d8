#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import DeviceStreams
import DeviceIO
import InputDevices
import InputModel
import Logging
import Pipeline
import Reactive
import Recording
import ServiceLifecycle
import StateServer
import Sensors

/// What the command line asked for.
struct DaemonOptions: Sendable {
    var replay: [String]
    var demo: Bool
    /// The replay pace; `.infinity` = as fast as possible (`--speed 0`).
    var speed: Double
    var loop: Bool
    /// Description file for the one `--replay` file (`--desc`).
    var descriptionPath: String? = nil
    /// Remove a finished replay's devices (`--remove-at-end`); by default they stay present.
    var removeAtEnd = false
    /// Start the replay when the first client starts a WATCH (`--wait-for-watch`).
    var waitForWatch = false
    /// Where devices' batteries are looked for instead of /sys (`--sysfs`); replayed devices
    /// get batteries only with it (docs/batteries.md).
    var sysfsRoot: String? = nil
    var configPath: String?
    var socketPath: String
    var socketGroup: String?
    var allowUsers: [String]
    var allowGroups: [String]
    /// Groups whose members see key codes (`--keys-group`); others get them hidden.
    var keysGroups: [String] = []
    var maxClients: Int
    var maxClientsPerUser: Int
    var idleTimeoutAfterRequest: Duration
}

/// A start-up failure with the exit code it maps to (sysexits.h).
struct StartupError: Error {
    var message: String
    var exitCode: Int32

    static func usage(_ m: String) -> StartupError { StartupError(message: m, exitCode: 64) }       // EX_USAGE
    static func data(_ m: String) -> StartupError { StartupError(message: m, exitCode: 65) }        // EX_DATAERR
    static func config(_ m: String) -> StartupError { StartupError(message: m, exitCode: 78) }      // EX_CONFIG
    static func io(_ m: String) -> StartupError { StartupError(message: m, exitCode: 74) }          // EX_IOERR
    static func unavailable(_ m: String) -> StartupError { StartupError(message: m, exitCode: 69) } // EX_UNAVAILABLE
    /// The input source failed (udev could not be set up, or its monitor broke).
    static func input(_ m: String) -> StartupError { StartupError(message: m, exitCode: 71) }       // EX_OSERR
}

/// Where the devices come from: udev + evdev, or recordings.
struct InputSource: Sendable {
    let description: String
    var devices: Observable<DeviceStream>
    /// The sensors: a replay of sensor recordings, or the IIO monitor's.
    var sensors: Observable<SensorStream> = .empty()
    /// The source object, kept alive while the daemon runs.
    let retain: any Sendable
    /// The thread the IIO sensors are read on (live input), ended at shutdown.
    var sensorThread: SensorThread? = nil
    /// The thread devices' batteries are read on (live input, and a replay with `--sysfs`),
    /// ended at shutdown (docs/batteries.md).
    var batteryThread: InputLoop? = nil
    /// Emits once (on the input scheduler) when the source's first devices are announced; nil
    /// when they are by the time the subscription's job on the input scheduler has run (udev
    /// enumerates there).
    var ready: Observable<Void>? = nil
    /// Said after the device count when the input is ready (e.g. what a replay waits for).
    var readyNote = ""
    /// The live source's counters for `METRICS` (nil for a replay).
    var statistics: (@Sendable () -> SourceStatistics)? = nil
}

/// Wires the daemon: input source → DeviceHub (filters + StateStore) → StateServer, plus
/// systemd notification and SIGHUP reload, as swift-service-lifecycle services started in
/// dependency order and shut down in reverse on SIGTERM/SIGINT.
struct DaemonBuilder {
    let options: DaemonOptions
    let logger: Logger

    /// The configuration at `path` (the built-in one without a path). Typed: start-up and the
    /// SIGHUP reload handle every failure, and a reload keeps the running configuration.
    static func loadConfig(_ path: String?) throws(StartupError) -> FilterConfig {
        guard let path else { return FilterConfig() }
        do {
            return try FilterConfig.load(path: path)
        } catch {
            throw StartupError.config("invalid configuration: \(error)")
        }
    }

    func build() throws -> Daemon {
        let config = try Self.loadConfig(options.configPath)
        let scheduler: InputLoop
        do {
            scheduler = try InputLoop(name: "evflow.input")
        } catch {
            throw StartupError.input("input thread: \(error)")
        }
        var source = try makeSource(scheduler: scheduler)
        let replaying = options.demo || !options.replay.isEmpty
        // Sensors run the configuration's `sensors:` filters and orientation rule (reloaded with
        // the rest on SIGHUP).
        let hub = DeviceHub(store: StateStore(), config: config, scheduler: scheduler,
                            latencyClock: replaying ? .replay : .monotonic, filterSensors: true)
        if replaying && options.waitForWatch {
            // The replay's clock starts with the first WATCH, so that watcher sees the first
            // frames (a replay that starts with the daemon plays before anyone can connect).
            // The watch registers in the middle of its subscription on the server's event
            // loop: the replay is subscribed by the loop's next job, once the watch is
            // complete, or its first devices could come while the watch is not yet ready to
            // take their frames.
            let devices = source.devices
            let loop = GlobalExecutor.group.next()
            source.devices = hub.firstWatcher.take(1).flatMap { _ in
                Observable<DeviceStream>.create { observer in
                    let subscription = SingleAssignmentDisposable()
                    loop.execute { subscription.setDisposable(devices.subscribe(observer)) }
                    return subscription
                }
            }
            let sensors = source.sensors
            source.sensors = hub.firstWatcher.take(1).flatMap { _ in
                Observable<SensorStream>.create { observer in
                    let subscription = SingleAssignmentDisposable()
                    loop.execute { subscription.setDisposable(sensors.subscribe(observer)) }
                    return subscription
                }
            }
            source.ready = nil
            source.readyNote = " (the replay starts with the first WATCH)"
        }

        var serverConfig = StateServerConfiguration(socketPath: options.socketPath, release: Evflowd.release)
        serverConfig.maxClients = options.maxClients
        serverConfig.maxClientsPerUser = options.maxClientsPerUser
        serverConfig.idleTimeoutAfterRequest = options.idleTimeoutAfterRequest
        serverConfig.socketGroup = options.socketGroup
        serverConfig.allowedUIDs = Set(try options.allowUsers.map(Self.uid))
        serverConfig.allowedGIDs = Set(try options.allowGroups.map(Self.gid))
        serverConfig.keysGIDs = Set(try options.keysGroups.map(Self.gid))
        do {
            let fds = try SystemdNotifier.listenFDs()
            if fds.count > 1 { throw StartupError.usage("socket activation passed \(fds.count) sockets; expected one") }
            if let fd = fds.first {
                guard try SystemdNotifier.isListeningUnixStreamSocket(fd) else {
                    throw StartupError.usage("socket activation fd \(fd) is not a listening Unix stream socket")
                }
                serverConfig.listenFD = fd
            }
        } catch let error as SystemdError {
            throw StartupError.unavailable("socket activation: \(error)")
        }
        let server = StateServer(configuration: serverConfig, hub: hub, logger: logger,
                                 eventLoopGroup: GlobalExecutor.group, sourceStatistics: source.statistics)
        return Daemon(logger: logger, options: options, source: source, hub: hub, server: server,
                      inputScheduler: scheduler, sensorProxy: config.sensorProxy)
    }

    private func makeSource(scheduler: InputLoop) throws -> InputSource {
        if options.demo || !options.replay.isEmpty {
            var recordings: [Recording] = []
            var demoDirectory: String?
            if options.demo {
                let executable = try Self.executablePath()
                do {
                    let directory = try DemoRecordings.locate(executablePath: executable)
                    recordings = try DemoRecordings.read(from: directory)
                    demoDirectory = directory
                } catch let error as DemoRecordings.NotFound {
                    throw StartupError.unavailable("--demo: \(error) (scripts/install puts them in PREFIX/\(DemoRecordings.installedDirectory))")
                } catch let error as RecordingError {
                    // As for --replay: a file that cannot be read is an I/O error, a bad one a data error.
                    if case .unreadable = error.reason { throw StartupError.io("--demo: \(error)") }
                    throw StartupError.data("--demo: \(error)")
                }
            }
            var sessions: [Session] = []
            var sensorRecordings: [SensorRecording] = []
            for path in options.replay {
                let url = URL(fileURLWithPath: path)
                do {
                    // A sensor recording (docs/formats/sensors.md) is told by its first line too.
                    if SensorRecording.isSensorRecording(path: path) {
                        sensorRecordings.append(try SensorRecording.read(path: path))
                        continue
                    }
                    // A session (docs/formats/session.md) is told by its first line.
                    if SessionReader.isSessionFile(url) {
                        if options.descriptionPath != nil {
                            throw StartupError.usage("--desc is for evemu and evtest events; \(path) is a session, which holds its own descriptions")
                        }
                        sessions.append(try SessionReader.read(contentsOf: url))
                        continue
                    }
                    recordings.append(try Recording.read(contentsOf: url,
                                                         description: options.descriptionPath.map { URL(fileURLWithPath: $0) }))
                } catch let error as RecordingError {
                    if case .unreadable = error.reason { throw StartupError.io("\(error)") }
                    throw StartupError.data("\(error)")
                }
            }
            let replay = ReplaySource(recordings: recordings, sessions: sessions, scheduler: scheduler, speed: options.speed,
                                      loop: options.loop, removeAtEnd: options.removeAtEnd)
            if replay.droppedIncompleteEvents > 0 {
                logger.notice("replay: \(replay.droppedIncompleteEvents) events after the last SYN_REPORT are not replayed")
            }
            let what = demoDirectory.map { "the demo recordings in \($0)" } ?? options.replay.joined(separator: ", ")
            let sensorReplay = SensorReplaySource(recordings: sensorRecordings, scheduler: scheduler, speed: options.speed,
                                                  removeAtEnd: options.removeAtEnd)
            var source = InputSource(description: "replay of \(what) at speed \(options.speed.isInfinite ? "max" : "\(options.speed)")",
                                     devices: replay.devices, sensors: sensorReplay.sensors, retain: replay, ready: replay.hasStarted)
            // A replayed device's battery from a sysfs snapshot (docs/batteries.md), only with --sysfs.
            if let root = options.sysfsRoot {
                let thread = try Self.batteryThread()
                let batteries = DeviceBatteries(supplies: PowerSupplies(root: root, replayedDevices: true), readScheduler: thread)
                source.devices = replay.devices.map { batteries.attach(to: $0) }
                source.batteryThread = thread
            }
            return source
        }
        let monitor = InputDeviceMonitor(loop: scheduler)
        // IIO sensors beside them (docs/sensors.md): read only while something consumes them,
        // on a thread of their own (a read can block in the driver: docs/architecture.md).
        let sensorThread: SensorThread
        do {
            sensorThread = try SensorThread(delivery: scheduler)
        } catch {
            throw StartupError.input("sensor thread: \(error)")
        }
        let sensorMonitor = SensorMonitor(loop: scheduler, thread: sensorThread)
        // Each device's own battery, read on a thread of its own (docs/batteries.md).
        let batteryThread = try Self.batteryThread()
        let batteries = DeviceBatteries(supplies: PowerSupplies(root: options.sysfsRoot ?? "/sys"),
                                        changes: monitor.powerSupplyChanges, readScheduler: batteryThread)
        return InputSource(description: "live input devices (udev + evdev) and IIO sensors",
                           devices: monitor.devices.map { batteries.attach(to: $0) },
                           sensors: sensorMonitor.sensors, retain: (monitor, sensorMonitor), sensorThread: sensorThread,
                           batteryThread: batteryThread,
                           statistics: {
                               let s = monitor.statistics
                               return SourceStatistics(openRetries: s.openRetries, inaccessible: s.inaccessible,
                                                       udevOverflows: s.udevOverflows,
                                                       removed: ["udev-remove": s.removedOnUdevRemove,
                                                                 "enodev": s.removedOnENODEV,
                                                                 "read-error": s.removedOnReadError],
                                                       droppedStreams: s.droppedStreams)
                           })
    }

    /// The thread batteries are read on: a read can block for seconds (docs/batteries.md).
    static func batteryThread() throws(StartupError) -> InputLoop {
        do {
            return try InputLoop(name: "evflow.battery")
        } catch {
            throw StartupError.input("battery thread: \(error)")
        }
    }

    /// This executable's absolute path (`/proc/self/exe`: symbolic links resolved), where
    /// `--demo` starts its search.
    static func executablePath() throws -> String {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else {
            throw StartupError.unavailable("--demo: cannot read /proc/self/exe: \(String(cString: strerror(errno)))")
        }
        return String(decoding: buffer[..<n], as: UTF8.self)
    }

    static func uid(_ text: String) throws -> UInt32 {
        if let n = UInt32(text) { return n }
        guard let pw = getpwnam(text) else { throw StartupError.usage("unknown user '\(text)'") }
        return pw.pointee.pw_uid
    }

    static func gid(_ text: String) throws -> UInt32 {
        if let n = UInt32(text) { return n }
        guard let gr = getgrnam(text) else { throw StartupError.usage("unknown group '\(text)'") }
        return gr.pointee.gr_gid
    }
}
