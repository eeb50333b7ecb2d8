import CSystemd
import DeviceIO
import InputDevices
import InputModel
import Logging
import Pipeline
import Reactive
import SensorProxy
import ServiceLifecycle

/// iio-sensor-proxy's D-Bus API served by evflowd (`sensor_proxy: true`; docs/sensors.md,
/// "The desktop's D-Bus API"): `net.hadess.SensorProxy` on the system bus, object
/// `/net/hadess/SensorProxy`, with the hub's filtered samples behind its properties.
///
/// - The object is one `sd_bus_add_object` handler (no vtable: sd-bus's vtable macros do not
///   import into Swift): `Claim…`/`Release…`, `Properties.Get/GetAll/Set` and `Introspect`
///   are answered here; sd-bus answers `Peer` and unknown methods.
/// - The state (claims, chosen sensors, properties) is `ProxyState`; after each change the
///   sensors it says to read are subscribed and the others' subscriptions disposed (the
///   hub reads a sensor while anything consumes it), and the changed properties go out in one
///   `PropertiesChanged`.
/// - A claim belongs to its caller's unique name: while the name holds one it is watched
///   (`BusNameWatch`: a `NameOwnerChanged` match on it, then `GetNameOwner`, so a client gone
///   before the match was in place is seen too), and its departure ends its claims.
/// - Sensors come from `SensorHub.feeds()`; a feed's `ended` says when one goes away.
///
/// On the input loop's thread (`BusConnection`); `start()` and `close()` are called there.
final class SensorProxyBus: @unchecked Sendable {
    private let loop: InputLoop
    private let hub: SensorHub
    private let logger: Logger
    private var connection: BusConnection?
    private var slots: [OpaquePointer] = []
    /// The claimants' names, watched while they hold a claim.
    private var claimants: BusNameWatch?
    private var state = ProxyState()
    private var feeds: [DeviceID: SensorFeed] = [:]
    private var reads: [ProxySensorKind: (id: DeviceID, subscription: Disposable)] = [:]
    /// Each present sensor's `ended` subscription.
    private var endings: [DeviceID: Disposable] = [:]
    private let subscriptions = CompositeDisposable()
    private var closed = false

    init(loop: InputLoop, hub: SensorHub, logger: Logger) {
        self.loop = loop
        self.hub = hub
        self.logger = logger
    }

    /// Connects, serves the object, asks for the name and follows the sensors. Without a
    /// system bus: one journal line, and nothing else.
    func start() {
        precondition(loop.isCurrent, "SensorProxyBus.start must be called on the input loop")
        guard !closed, connection == nil else { return }
        let connection: BusConnection
        do {
            connection = try BusConnection(loop: loop) { [weak self] why in
                self?.logger.error("sensor proxy: the system bus connection is gone (\(why)); \(ProxyInterface.busName) is no longer served")
                self?.claimants?.close()
                self?.claimants = nil
                self?.connection = nil
                self?.stopReading()
            }
        } catch {
            logger.error("sensor proxy: no system bus (\(error)); \(ProxyInterface.busName) is not served")
            return
        }
        self.connection = connection
        guard let bus = connection.bus else { return }
        let me = Unmanaged.passUnretained(self).toOpaque()
        var slot: OpaquePointer?
        var rc = sd_bus_add_object(bus, &slot, ProxyInterface.path, { message, userdata, _ in
            guard let message else { return 0 }
            return Unmanaged<SensorProxyBus>.fromOpaque(userdata!).takeUnretainedValue().handle(message)
        }, me)
        if rc >= 0, let slot { slots.append(slot) }
        claimants = BusNameWatch(bus: bus) { [weak self] name in self?.vanished(name) }
        if rc >= 0 {
            slot = nil
            // Flags 0: not queued behind another owner (iio-sensor-proxy), not replaceable.
            rc = sd_bus_request_name_async(bus, &slot, ProxyInterface.busName, 0, { reply, userdata, _ in
                Unmanaged<SensorProxyBus>.fromOpaque(userdata!).takeUnretainedValue().nameReply(reply)
                return 0
            }, me)
            if rc >= 0, let slot { slots.append(slot) }
        }
        guard rc >= 0 else {
            logger.error("sensor proxy: cannot serve \(ProxyInterface.busName) (\(BusError.text(-rc)))")
            close()
            return
        }
        _ = subscriptions.insert(hub.feeds().subscribe(onNext: { [weak self] update in
            switch update {
            case .present(let feeds): for feed in feeds { self?.added(feed) }
            case .added(let feed): self?.added(feed)
            }
        }))
        connection.flushSoon()
    }

    /// Stops reading, releases the name and disconnects. Idempotent.
    func close() {
        precondition(loop.isCurrent, "SensorProxyBus.close must be called on the input loop")
        closed = true
        subscriptions.dispose()
        for ending in endings.values { ending.dispose() }
        endings = [:]
        stopReading()
        claimants?.close()
        claimants = nil
        for slot in slots { sd_bus_slot_unref(slot) }
        slots = []
        connection?.close()
        connection = nil
    }

    // MARK: Sensors

    private func added(_ feed: SensorFeed) {
        let id = feed.info.id
        feeds[id] = feed
        apply(state.added(feed.info))
        endings.removeValue(forKey: id)?.dispose()
        // The completion, not the element: a sensor gone before this subscription only
        // completes (at once, inside `subscribe`: after the state has it, so it leaves again).
        let ending = feed.ended.subscribe(onCompleted: { [weak self] in self?.removed(id, feed.info) })
        if feeds[id]?.info == feed.info { endings[id] = ending }
    }

    private func removed(_ id: DeviceID, _ info: SensorInfo) {
        // A sensor that came back under the same id replaced this feed already.
        guard feeds[id]?.info == info else { return }
        feeds[id] = nil
        endings.removeValue(forKey: id)?.dispose()
        apply(state.removed(id))
    }

    /// Emits `changes` and makes the subscriptions follow `state.reading`.
    private func apply(_ changes: [(name: String, value: ProxyValue)]) {
        emit(changes)
        // Without a connection (lost) no claim can be served: nothing is read for D-Bus.
        let wanted = connection == nil ? [:] : state.reading
        for (kind, read) in reads where wanted[kind] != read.id || feeds[read.id] == nil {
            read.subscription.dispose()
            reads[kind] = nil
            logger.info("sensor proxy: \(kind.rawValue.lowercased()) no longer read for D-Bus (\(read.id))")
        }
        for (kind, id) in wanted where reads[kind] == nil {
            guard let feed = feeds[id] else { continue }
            let subscription = feed.updates.subscribe(onNext: { [weak self] update in
                guard case .filtered(let sample, let orientation) = update, let self else { return }
                emit(state.sample(kind, of: id, values: sample.values, orientation: orientation))
            })
            reads[kind] = (id, subscription)
            logger.info("sensor proxy: \(kind.rawValue.lowercased()) read for D-Bus: \(id) (\(feed.info.name)), claimed by \(state.claims.names(kind).joined(separator: ", "))")
        }
    }

    private func stopReading() {
        for read in reads.values { read.subscription.dispose() }
        reads = [:]
    }

    // MARK: Bus events (inside sd_bus_process)

    private func nameReply(_ reply: OpaquePointer?) {
        if let reply, sd_bus_message_is_method_error(reply, nil) > 0 {
            let error = sd_bus_message_get_error(reply)
            logger.error("sensor proxy: the bus refused \(ProxyInterface.busName) (\(BusMessage.string(error?.pointee.name) ?? "an error"): \(BusMessage.string(error?.pointee.message) ?? "")); is evflow's D-Bus policy installed (docs/sensors.md)?")
            return
        }
        var result: UInt32 = 0
        guard let reply, sd_bus_message_read_basic(reply, BusMessage.type("u"), &result) > 0 else { return }
        // RequestName's answers: 1 primary owner, 3 exists (another owner), 4 already owner.
        if result == 1 || result == 4 {
            logger.notice("sensor proxy: serving \(ProxyInterface.busName) on the system bus")
        } else {
            logger.error("sensor proxy: \(ProxyInterface.busName) is owned by another process (iio-sensor-proxy?); not serving it (docs/sensors.md, switching)")
        }
    }

    private func vanished(_ name: String) {
        guard state.vanished(name) else { return }
        logger.info("sensor proxy: \(name) left the bus; its claims ended")
        apply([])
    }

    /// A method call to the object: 1 when answered here, 0 to let sd-bus answer.
    private func handle(_ m: OpaquePointer) -> Int32 {
        guard sd_bus_message_is_method_call(m, nil, nil) > 0 else { return 0 }
        let interface = BusMessage.string(sd_bus_message_get_interface(m))
        guard let member = BusMessage.string(sd_bus_message_get_member(m)) else { return 0 }
        switch (interface, member) {
        case (ProxyInterface.properties, "Get"):
            guard let iface = BusMessage.readString(m), let name = BusMessage.readString(m) else {
                return error(m, "org.freedesktop.DBus.Error.InvalidArgs", "expected (ss)")
            }
            guard iface == ProxyInterface.name else { return error(m, "org.freedesktop.DBus.Error.UnknownInterface", "no interface \(iface)") }
            guard let value = state.properties.value(of: name) else {
                return error(m, "org.freedesktop.DBus.Error.UnknownProperty", "no property \(name)")
            }
            return reply(m) { BusMessage.append($0, variant: value) }
        case (ProxyInterface.properties, "GetAll"):
            guard let iface = BusMessage.readString(m) else { return error(m, "org.freedesktop.DBus.Error.InvalidArgs", "expected (s)") }
            guard iface == ProxyInterface.name || iface.isEmpty else {
                return error(m, "org.freedesktop.DBus.Error.UnknownInterface", "no interface \(iface)")
            }
            return reply(m) { BusMessage.append($0, dictionary: state.properties.all) }
        case (ProxyInterface.properties, "Set"):
            return error(m, "org.freedesktop.DBus.Error.PropertyReadOnly", "the properties of \(ProxyInterface.name) are read-only")
        case (ProxyInterface.introspectable, "Introspect"):
            return reply(m) { BusMessage.append($0, string: ProxyInterface.introspection) }
        case (ProxyInterface.name, _), (nil, _):
            guard let (kind, claim) = ProxySensorKind.method(member) else { return 0 }
            guard let sender = BusMessage.string(sd_bus_message_get_sender(m)) else {
                return error(m, "org.freedesktop.DBus.Error.InvalidArgs", "a claim needs a sender")
            }
            if claim {
                state.claim(kind, by: sender)
                if claimants?.watch(sender) == false {
                    logger.warning("sensor proxy: cannot watch \(sender) on the bus; its claim ends when it releases it")
                }
            } else {
                state.release(kind, by: sender)
                if !state.claims.holds(sender) { claimants?.unwatch(sender) }
            }
            logger.info("sensor proxy: \(sender) \(claim ? "claims" : "releases") the \(kind.rawValue.lowercased())")
            let answered = reply(m) { _ in 0 }
            apply([])
            return answered
        default:
            return 0
        }
    }

    // MARK: Messages

    private func reply(_ call: OpaquePointer, _ body: (OpaquePointer) -> Int32) -> Int32 {
        var reply: OpaquePointer?
        var rc = sd_bus_message_new_method_return(call, &reply)
        if rc >= 0, let reply { rc = body(reply) }
        if rc >= 0, let reply, let bus = connection?.bus { rc = sd_bus_send(bus, reply, nil) }
        if let reply { sd_bus_message_unref(reply) }
        if rc < 0 { logger.warning("sensor proxy: a reply could not be sent (\(BusError.text(-rc)))") }
        return 1
    }

    private func error(_ call: OpaquePointer, _ name: String, _ text: String) -> Int32 {
        name.withCString { n in
            text.withCString { t in
                var e = sd_bus_error(name: n, message: t, _need_free: 0)
                _ = sd_bus_reply_method_error(call, &e)
            }
        }
        return 1
    }

    /// One `PropertiesChanged` with `changes` (nothing for none).
    private func emit(_ changes: [(name: String, value: ProxyValue)]) {
        guard !changes.isEmpty, let connection, let bus = connection.bus else { return }
        var signal: OpaquePointer?
        var rc = sd_bus_message_new_signal(bus, &signal, ProxyInterface.path, ProxyInterface.properties, "PropertiesChanged")
        if rc >= 0, let signal {
            rc = BusMessage.append(signal, string: ProxyInterface.name)
            if rc >= 0 { rc = BusMessage.append(signal, dictionary: changes) }
            if rc >= 0 { rc = sd_bus_message_open_container(signal, BusMessage.type("a"), "s") }
            if rc >= 0 { rc = sd_bus_message_close_container(signal) }
            if rc >= 0 { rc = sd_bus_send(bus, signal, nil) }
        }
        if let signal { sd_bus_message_unref(signal) }
        if rc < 0 {
            logger.warning("sensor proxy: PropertiesChanged could not be sent (\(BusError.text(-rc)))")
        } else {
            // Outside sd_bus_process (a sample's job), nothing else would write it out.
            connection.flushSoon()
        }
    }
}

/// Serves `net.hadess.SensorProxy` (`SensorProxyBus`) from when the input is ready until
/// shutdown, where it is closed before the sensors' sessions go. Never fails: without a
/// system bus, or with the name taken, it says so and waits for shutdown.
struct SensorProxyService: Service {
    let sensors: SensorHub
    let inputScheduler: InputLoop
    let after: Latch
    let logger: Logger

    func run() async throws {
        guard await cancelWhenGracefulShutdown({ await after.wait() }) else { return }
        let proxy = SensorProxyBus(loop: inputScheduler, hub: sensors, logger: logger)
        inputScheduler.schedule { proxy.start() }
        try? await gracefulShutdown()
        let closed = Latch()
        inputScheduler.schedule {
            proxy.close()
            closed.open()
        }
        await closed.opened()
    }
}
