import ArgumentParser
import Dispatch
import Synchronization
import Logging
import OptionValues
import Pipeline

#if canImport(Glibc)
import Glibc
#endif

/// `evflowd`: reads input devices (or replays recordings), filters their noise, keeps their
/// state and publishes it on a Unix socket. `@main` only parses arguments; `DaemonBuilder`
/// wires the services.
@main
struct Evflowd: ParsableCommand {
    static let release = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "evflowd",
        abstract: "Input-device event daemon: noise filtering, device state, Unix-socket publishing.",
        discussion: """
            Live mode (default) reads every input device through udev and libevdev, and every
            IIO sensor while a client watches it.
            --replay FILE... plays recordings (evemu, evtest or libinput record) instead, or
            sessions (evflowctl record --all), whose devices come and go at their recorded
            times, or sensor recordings (evflowctl record --sensors); --demo plays two real devices' recordings (evemu-devices, MIT) in a loop, for
            machines without input devices. --demo looks for them, in this order, in
            DIR/../share/evflow/demo (DIR: the directory of the evflowd executable; where
            scripts/install puts them), then in Tests/Fixtures/recordings/evemu-devices under
            DIR and each of its parents (a source checkout's build).
            SIGHUP reloads --config without losing device state; SIGTERM shuts down cleanly.
            """,
        version: release)

    @Option(name: .long, parsing: .upToNextOption, help: "Replay these recordings instead of reading devices.")
    var replay: [String] = []

    @Flag(name: .long, help: "Replay the demo recordings in a loop (implies replay mode; where they are looked for: below).")
    var demo = false

    // The numeric options' values are parsed and range-checked by OptionValues (shared with
    // the options fuzz target); `.unconditional` takes "-1" as the value, to be refused with
    // the reason, not as an unknown option ("Missing value").
    @Option(name: .long, parsing: .unconditional,
            help: "Replay pace: 1 = as recorded, 2 = twice as fast, 0 = as fast as possible (0.001 to 1000000).",
            transform: { try OptionValues.replaySpeed($0) })
    var speed: Double = 1

    @Flag(name: .long, help: "Start a replay again when it ends (devices are removed and re-added).")
    var loop = false

    @Option(name: .customLong("desc"), help: "Description of the --replay file when it holds events only (evemu description or evtest header, any name).")
    var descriptionPath: String?

    @Flag(name: .customLong("remove-at-end"), help: "Remove a replay's devices when it ends (by default they stay present, final state queryable, until evflowd stops).")
    var removeAtEnd = false

    @Flag(name: .customLong("wait-for-watch"), help: "Start the replay when the first client starts a WATCH, so it sees the first frames (devices appear then too).")
    var waitForWatch = false

    @Option(name: .long, help: ArgumentHelp("Sysfs root for devices' batteries instead of /sys; with --replay or --demo, a replayed device with a uniq gets the battery DIR/class/power_supply/hid-<uniq>-battery.", valueName: "dir"))
    var sysfs: String?

    @Option(name: .long, help: "Noise-filter configuration (YAML, see docs/configuration.md).")
    var config: String?

    @Flag(name: .long, help: "Check --config and exit.")
    var checkConfig = false

    @Option(name: .long, help: "Socket path (ignored under socket activation).")
    var socket: String = "/run/evflow/evflowd.sock"

    @Option(name: .long, help: "Group that owns the socket file (mode 0660).")
    var socketGroup: String?

    @Option(name: .customLong("allow-user"), help: "Only these users (name or uid) may connect; repeatable.")
    var allowUsers: [String] = []

    @Option(name: .customLong("allow-group"), help: "Members of these groups (name or gid) may connect; repeatable.")
    var allowGroups: [String] = []

    @Option(name: .customLong("keys-group"), help: "Members of these groups (name or gid) see key codes; others get them hidden (root and evflowd's user always see them); repeatable.")
    var keysGroups: [String] = []

    @Option(name: .long, parsing: .unconditional, help: "Most clients at once.", transform: { try OptionValues.clientLimit($0) })
    var maxClients: Int = 64

    @Option(name: .long, parsing: .unconditional, help: "Most clients of one user (peer uid) at once.",
            transform: { try OptionValues.clientLimit($0) })
    var maxClientsPerUser: Int = 16

    @Option(name: .long, parsing: .unconditional,
            help: "Seconds a client that is not watching may stay silent after a request (default 300, at most 365 days).",
            transform: { try OptionValues.idleTimeout($0) })
    var idleTimeout: Duration = .seconds(300)

    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: String = "info"

    mutating func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else { throw ValidationError("unknown --log-level '\(logLevel)'") }
        if demo && !replay.isEmpty { throw ValidationError("--demo and --replay exclude each other") }
        if waitForWatch && !demo && replay.isEmpty { throw ValidationError("--wait-for-watch needs --replay or --demo") }
        if descriptionPath != nil && replay.count != 1 { throw ValidationError("--desc needs exactly one --replay file") }
    }

    /// Before anything else, argument parsing included: SIGHUP's default action would end the
    /// daemon (issue #25); from here on, for the process's life, a SIGHUP is a count the
    /// reload service takes (`HangupSignal`).
    static func main() {
        HangupSignal.install()
        main(nil)
    }

    func run() throws {
        // Swift concurrency runs on NIO's event loops, not libdispatch's worker pool (whose
        // monitor would wake the idle daemon every second): GlobalExecutor.
        let onNIO = GlobalExecutor.installNIOEventLoops()
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let command = self
        Task {
            do {
                try await command.runDaemon(concurrencyOnNIO: onNIO)
                outcome.withLock { $0 = .success(()) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        done.wait()
        try outcome.withLock { $0 }?.get()
    }

    func runDaemon(concurrencyOnNIO: Bool) async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = JournaldLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "evflowd")
        if !concurrencyOnNIO {
            logger.warning("Swift concurrency runs on libdispatch (its global-enqueue hook was already set): the idle daemon wakes once a second")
        }
        var options = DaemonOptions(
            replay: replay, demo: demo, speed: speed, loop: loop || demo, configPath: config, socketPath: socket,
            socketGroup: socketGroup, allowUsers: allowUsers, allowGroups: allowGroups, maxClients: maxClients,
            maxClientsPerUser: maxClientsPerUser, idleTimeoutAfterRequest: idleTimeout)
        options.descriptionPath = descriptionPath
        options.removeAtEnd = removeAtEnd
        options.keysGroups = keysGroups
        options.waitForWatch = waitForWatch
        options.sysfsRoot = sysfs
        do {
            if checkConfig {
                let config = try DaemonBuilder.loadConfig(options.configPath)
                print("configuration OK")
                for line in config.checkSummary { print(line) }
                return
            }
            let daemon = try DaemonBuilder(options: options, logger: logger).build()
            try await daemon.run()
        } catch let error as StartupError {
            logger.critical("\(error.message)")
            throw ExitCode(error.exitCode)
        }
    }
}
