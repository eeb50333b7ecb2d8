import ArgumentParser
import Dispatch
import EvflowProtocol
import Foundation
import MQTTBridge
import Reactive

/// `evflow-mqtt`: publishes this machine's input devices — descriptions, state, optional event
/// streams, availability, Home Assistant discovery — to an MQTT broker (docs/mqtt.md).
@main
struct EvflowMQTT: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "evflow-mqtt",
        abstract: "Bridge evflowd's devices and events to an MQTT broker.",
        discussion: "Topics, documents and options: docs/mqtt.md. Example: evflow-mqtt --broker mqtt.local --ha-discovery")

    @Option(help: "evflowd's socket.") var socket = "/run/evflow/evflowd.sock"
    @Option(help: "Broker: host, host:port, [IPv6]:port, mqtt://host[:port] or mqtts://host[:port] (TLS).") var broker = "localhost"
    @Option(help: "Broker port (default 1883, 8883 with TLS).") var port: Int?
    @Option(help: "MQTT protocol version: 5 or 3.1.1.") var mqttVersion = "5"
    @Option(help: "Client id (default evflow-mqtt-<hostname>).") var clientID: String?
    @Option(help: "Keepalive in seconds.") var keepalive = 30
    @Option(help: "User name for the broker.") var username: String?
    @Option(help: "File holding the password (first line); or set EVFLOW_MQTT_PASSWORD.") var passwordFile: String?
    @Option(help: "CA certificate file: turns TLS on.") var tlsCa: String?
    @Option(help: "Directory of CA certificates: turns TLS on.") var tlsCapath: String?
    @Option(help: "Client certificate (PEM).") var tlsCert: String?
    @Option(help: "Client key (PEM).") var tlsKey: String?
    @Option(help: "Topic prefix (default evflow/<hostname>).") var prefix: String?
    @Option(help: "Host name used in topics and ids (default: this machine's).") var hostname: String?
    @Option(help: "Minimum seconds between two state documents of one device.") var stateInterval = 0.25
    @Option(help: "Seconds between state refreshes without frames (counters).") var refreshInterval = 30.0
    @Option(help: "Seconds between bridge counter documents.") var statsInterval = 10.0
    @Option(help: "Event messages kept while the broker is away (oldest dropped first).") var outbox = 10_000
    @Option(help: "QoS of retained documents (state, descriptions, availability, discovery).") var stateQos = 1
    @Option(help: "QoS of event messages.") var eventQos = 0
    @Option(name: .customLong("events"), help: "An event stream: 'types=EV_KEY;codes=BTN_LEFT;devices=keyboard;max-rate=50;per-code' (repeatable; off by default).")
    var events: [String] = []
    @Flag(help: "Publish Home Assistant MQTT discovery documents.") var haDiscovery = false
    @Option(help: "Home Assistant discovery prefix.") var haPrefix = "homeassistant"
    @Option(help: "A key or button to expose as a Home Assistant binary_sensor (repeatable), e.g. KEY_POWER.")
    var haKey: [String] = []
    @Flag(help: "Neither watch nor publish evflowd's sensors (watching them is what makes evflowd read them).") var noSensors = false
    @Flag(help: "Neither watch nor publish the gestures of the devices' keys (and no device triggers).") var noGestures = false
    @Option(help: "First reconnect delay in seconds.") var retryInitial = 0.5
    @Option(help: "Largest reconnect delay in seconds.") var retryMax = 30.0

    func run() throws {
        let settings: BridgeSettings
        let options: BrokerOptions
        let streams: [EventStreamSpec]
        do {
            (settings, options, streams) = try configure()
        } catch {
            FileHandle.standardError.write(Data("evflow-mqtt: \(error)\n".utf8))
            throw ExitCode(64)
        }
        let log: @Sendable (String) -> Void = { line in
            FileHandle.standardError.write(Data("evflow-mqtt: \(line)\n".utf8))
        }
        let bridge = Bridge(socketPath: socket, broker: options, settings: settings, streams: streams,
                            backoff: ExponentialBackoff(initial: .seconds(retryInitial), maxDelay: .seconds(retryMax), maxAttempts: .max),
                            log: log)
        log("bridging \(socket) to \(options.host):\(options.port) under \(settings.layout.prefix)/")
        bridge.start()
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let done = DispatchSemaphore(value: 0)
        var sources: [DispatchSourceSignal] = []
        for sig in [SIGTERM, SIGINT] {
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler { done.signal() }
            s.resume()
            sources.append(s)
        }
        done.wait()
        log("stopping")
        bridge.stop()
        withExtendedLifetime(sources) {}
    }

    func configure() throws(ConfigError) -> (BridgeSettings, BrokerOptions, [EventStreamSpec]) {
        let host = hostname ?? ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "localhost"
        var settings = BridgeSettings(layout: try TopicLayout(hostname: host, prefix: prefix, discoveryPrefix: haPrefix))
        func seconds(_ v: Double, _ name: String, min: Double) throws(ConfigError) -> RxTimeInterval {
            guard v.isFinite, v >= min, v <= 86_400 else { throw ConfigError("--\(name) must be between \(min) and 86400 seconds") }
            return .seconds(v)
        }
        settings.stateInterval = try seconds(stateInterval, "state-interval", min: 0)
        settings.refreshInterval = try seconds(refreshInterval, "refresh-interval", min: 1)
        settings.statsInterval = try seconds(statsInterval, "stats-interval", min: 1)
        _ = try seconds(retryInitial, "retry-initial", min: 0.01)
        _ = try seconds(retryMax, "retry-max", min: 0.01)
        guard (0...10_000_000).contains(outbox) else { throw ConfigError("--outbox must be between 0 and 10000000") }
        settings.outboxEvents = outbox
        guard (0...2).contains(stateQos), (0...2).contains(eventQos) else { throw ConfigError("--state-qos and --event-qos must be 0, 1 or 2") }
        settings.stateQoS = Int32(stateQos)
        settings.eventQoS = Int32(eventQos)
        settings.sensors = !noSensors
        settings.gestures = !noGestures
        if haDiscovery {
            var keys: [UInt16] = []
            for k in haKey {
                guard let code = EventNaming.standard.codeNumber(k), code.type == 1 else {
                    throw ConfigError("--ha-key '\(k)' is not a key or button name (KEY_*, BTN_*)")
                }
                keys.append(code.code)
            }
            settings.discovery = Discovery(keys: keys, gestures: !noGestures)
        } else if !haKey.isEmpty {
            throw ConfigError("--ha-key needs --ha-discovery")
        }
        var o = BrokerOptions()
        let address = try BrokerAddress(parsing: broker)
        o.host = address.host
        guard let version = BrokerOptions.ProtocolVersion(rawValue: mqttVersion) else {
            throw ConfigError("--mqtt-version must be 5 or 3.1.1")
        }
        o.protocolVersion = version
        let caGiven = tlsCa != nil || tlsCapath != nil
        if address.tls == false && caGiven { throw ConfigError("--broker '\(broker)' says mqtt:// (no TLS) but --tls-ca/--tls-capath turn TLS on: use mqtts://") }
        if address.port != nil && port != nil { throw ConfigError("give the port once: in --broker or with --port") }
        // mqtts:// without a CA of its own verifies against the system's certificates.
        o.systemCAs = address.tls == true && !caGiven
        let tls = caGiven || address.tls == true
        let p = address.port ?? port ?? (tls ? 8883 : 1883)
        guard (1...65535).contains(p) else { throw ConfigError("--port must be between 1 and 65535") }
        o.port = Int32(p)
        guard (5...65535).contains(keepalive) else { throw ConfigError("--keepalive must be between 5 and 65535 seconds") }
        o.keepalive = Int32(keepalive)
        o.clientID = clientID ?? "evflow-mqtt-\(host)"
        o.username = username
        if let passwordFile {
            guard let text = try? String(contentsOfFile: passwordFile, encoding: .utf8) else {
                throw ConfigError("--password-file \(passwordFile): cannot read it")
            }
            o.password = String(text.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
        } else if let env = ProcessInfo.processInfo.environment["EVFLOW_MQTT_PASSWORD"] {
            o.password = env
        }
        if o.password != nil && o.username == nil { throw ConfigError("a password needs --username") }
        o.caFile = tlsCa
        o.caPath = tlsCapath
        o.certFile = tlsCert
        o.keyFile = tlsKey
        if (tlsCert == nil) != (tlsKey == nil) { throw ConfigError("--tls-cert and --tls-key go together") }
        if (tlsCert != nil) && !caGiven { throw ConfigError("--tls-cert and --tls-key need --tls-ca or --tls-capath") }
        let streams = try events.map { s throws(ConfigError) in try EventStreamSpec(parsing: s) }
        return (settings, o, streams)
    }
}
