import CMosquitto
import Foundation
import Reactive
import Synchronization

/// How to reach and log in to the broker (evflow-mqtt's `--broker…`, `--username`, `--tls-…`).
public struct BrokerOptions: Sendable {
    public enum ProtocolVersion: String, Sendable, CaseIterable {
        case v5 = "5"
        case v311 = "3.1.1"
        var mosquittoValue: Int32 { self == .v5 ? MQTT_PROTOCOL_V5 : MQTT_PROTOCOL_V311 }
    }
    public var host = "localhost"
    public var port: Int32 = 1883
    public var clientID = "evflow-mqtt"
    public var protocolVersion = ProtocolVersion.v5
    public var keepalive: Int32 = 30
    public var username: String?
    public var password: String?
    /// TLS is on when `caFile` or `caPath` is set, or `systemCAs`.
    public var caFile: String?
    public var caPath: String?
    public var certFile: String?
    public var keyFile: String?
    /// TLS verified against the system's certificate store (`mqtts://` without `--tls-ca`).
    public var systemCAs = false
    /// The last will: published by the broker when the bridge vanishes without a clean disconnect.
    public var willTopic: String?
    public var willPayload: [UInt8] = Array("offline".utf8)

    public init() {}
}

/// Why a broker session ended.
public struct BrokerError: Error, CustomStringConvertible, Sendable {
    public var description: String
    /// The broker answered and refused the login (bad credentials, not authorised, bad client id).
    public var refused: Bool
    public init(_ description: String, refused: Bool = false) {
        self.description = description
        self.refused = refused
    }
}

/// A live broker connection, handed out by `brokerSession` once the broker has accepted it.
/// `publish` may be called from any thread while the session lives; afterwards it returns false.
public final class BrokerConnection: @unchecked Sendable {
    fileprivate let handle = Mutex<OpaquePointer?>(nil)
    /// Messages libmosquitto has finished sending (QoS 0 written, QoS 1 acknowledged).
    public let completed = Atomic<UInt64>(0)

    init() {}

    /// Hands a message to libmosquitto's queue; false if the session is gone or refused it.
    @discardableResult
    public func publish(_ m: OutMessage) -> Bool {
        handle.withLock { h -> Bool in
            guard let h else { return false }
            let rc = m.payload.withUnsafeBytes { p in
                mosquitto_publish(h, nil, m.topic, Int32(p.count), p.baseAddress, m.qos, m.retain)
            }
            return rc == MOSQ_ERR_SUCCESS.rawValue
        }
    }
}

/// One broker session as a cold observable: each subscription creates a libmosquitto client,
/// connects (asynchronously) and starts libmosquitto's network thread (`mosquitto_loop_start`);
/// it emits the `BrokerConnection` once the broker accepts (CONNACK success). A refused login,
/// a failed connect or a lost connection end it with a `BrokerError`. Disposal tears the client
/// down on a background queue (`mosquitto_disconnect`, `mosquitto_loop_stop`, `mosquitto_destroy`):
/// libmosquitto's own reconnect loop never runs a second attempt, `retry(when:)` decides when.
public func brokerSession(_ options: BrokerOptions) -> Observable<BrokerConnection> {
    Observable.create { observer in
        _ = libraryInitialised
        let session = BrokerSessionBox(observer: observer, options: options)
        session.start()
        return Disposables.create { session.tearDown() }
    }
}

private let libraryInitialised: Bool = {
    mosquitto_lib_init()
    return true
}()

/// The client of one session: owns the libmosquitto handle and is its callbacks' `userdata`.
private final class BrokerSessionBox: @unchecked Sendable {
    let observer: AnyObserver<BrokerConnection>
    let options: BrokerOptions
    let connection = BrokerConnection()
    var mosq: OpaquePointer?
    var loopStarted = false
    private let torn = Atomic<Bool>(false)
    private static let reaper = DispatchQueue(label: "evflow-mqtt broker teardown")

    init(observer: AnyObserver<BrokerConnection>, options: BrokerOptions) {
        self.observer = observer
        self.options = options
    }

    func fail(_ message: String, refused: Bool = false) {
        observer.on(.error(BrokerError(message, refused: refused)))
    }

    func start() {
        let userdata = Unmanaged.passRetained(self).toOpaque()   // released after mosquitto_destroy
        guard let m = mosquitto_new(options.clientID, true, userdata) else {
            Unmanaged<BrokerSessionBox>.fromOpaque(userdata).release()
            return fail("cannot create an MQTT client: \(String(cString: strerror(errno)))")
        }
        mosq = m
        func check(_ rc: Int32, _ what: String) -> Bool {
            if rc == MOSQ_ERR_SUCCESS.rawValue { return true }
            let detail = rc == MOSQ_ERR_ERRNO.rawValue ? String(cString: strerror(errno)) : String(cString: mosquitto_strerror(rc))
            fail("\(what): \(detail)")
            return false
        }
        guard check(mosquitto_int_option(m, MOSQ_OPT_PROTOCOL_VERSION, options.protocolVersion.mosquittoValue), "MQTT protocol version") else { return }
        _ = mosquitto_int_option(m, MOSQ_OPT_TCP_NODELAY, 1)
        if let topic = options.willTopic {
            let ok = options.willPayload.withUnsafeBytes { p in
                check(mosquitto_will_set(m, topic, Int32(p.count), p.baseAddress, 1, true), "last will")
            }
            guard ok else { return }
        }
        if options.username != nil || options.password != nil {
            guard check(mosquitto_username_pw_set(m, options.username, options.password), "username/password") else { return }
        }
        if options.caFile != nil || options.caPath != nil {
            for (flag, path) in [("--tls-ca", options.caFile), ("--tls-cert", options.certFile), ("--tls-key", options.keyFile)] {
                if let path, access(path, R_OK) != 0 {
                    return fail("\(flag) \(path): \(String(cString: strerror(errno)))")
                }
            }
            guard check(mosquitto_tls_set(m, options.caFile, options.caPath, options.certFile, options.keyFile, nil), "TLS settings") else { return }
        } else if options.certFile != nil || options.keyFile != nil {
            return fail("--tls-cert and --tls-key need --tls-ca (or --tls-capath)")
        } else if options.systemCAs {
            guard check(mosquitto_int_option(m, MOSQ_OPT_TLS_USE_OS_CERTS, 1), "TLS with the system's certificates") else { return }
        }
        mosquitto_connect_callback_set(m) { _, userdata, rc in
            Unmanaged<BrokerSessionBox>.fromOpaque(userdata!).takeUnretainedValue().onConnect(rc)
        }
        mosquitto_disconnect_callback_set(m) { _, userdata, rc in
            Unmanaged<BrokerSessionBox>.fromOpaque(userdata!).takeUnretainedValue().onDisconnect(rc)
        }
        mosquitto_publish_callback_set(m) { _, userdata, _ in
            Unmanaged<BrokerSessionBox>.fromOpaque(userdata!).takeUnretainedValue().connection.completed.add(1, ordering: .relaxed)
        }
        let rc = mosquitto_connect_async(m, options.host, options.port, options.keepalive)
        guard check(rc, "cannot connect to the broker at \(options.host):\(options.port)") else { return }
        guard check(mosquitto_loop_start(m), "cannot start libmosquitto's network thread") else { return }
        loopStarted = true
    }

    func onConnect(_ rc: Int32) {
        if rc == 0 {
            connection.handle.withLock { $0 = mosq }
            observer.on(.next(connection))
            return
        }
        let why = options.protocolVersion == .v5 ? String(cString: mosquitto_reason_string(rc)) : String(cString: mosquitto_connack_string(rc))
        fail("the broker at \(options.host):\(options.port) refused the connection: \(why) (code \(rc))", refused: true)
    }

    func onDisconnect(_ rc: Int32) {
        connection.handle.withLock { $0 = nil }
        let why = rc == MOSQ_ERR_ERRNO.rawValue ? String(cString: strerror(errno)) : String(cString: mosquitto_strerror(rc))
        fail("lost the broker at \(options.host):\(options.port): \(why)")
    }

    /// Once: stops publishing at once, then disconnects, joins the network thread and frees the
    /// client on the reaper queue (the join can wait out libmosquitto's 1 s reconnect sleep).
    func tearDown() {
        guard !torn.exchange(true, ordering: .acquiringAndReleasing) else { return }
        connection.handle.withLock { $0 = nil }
        guard mosq != nil else { return }
        let started = loopStarted
        BrokerSessionBox.reaper.async {
            let m = self.mosq
            mosquitto_disconnect(m)
            if started { mosquitto_loop_stop(m, false) }
            mosquitto_destroy(m)
            Unmanaged.passUnretained(self).release()
        }
    }
}
