import EvflowProtocol
import InputModel
import Reactive

/// Where the core publishes: a broker connection (or a fake in tests).
public protocol MessagePublisher: AnyObject {
    /// Hands one message to the broker's client; false if it cannot (connection gone).
    func publish(_ m: OutMessage) -> Bool
}

/// Where the core sends requests: an evflowd connection (or a fake in tests).
public protocol DaemonRequester: AnyObject {
    /// Sends one request; false if the connection is gone.
    func send(_ r: Request) -> Bool
}

extension BrokerConnection: MessagePublisher {}
extension DaemonConnection: DaemonRequester {}

/// What the bridge publishes and how often (evflow-mqtt's options).
public struct BridgeSettings: Sendable {
    public var layout: TopicLayout
    /// At most one state document per device per interval (first change at once).
    public var stateInterval: RxTimeInterval = .milliseconds(250)
    /// Every device's state is asked for this often even without frames (counters move when a
    /// filter drops whole frames, which a filtered watch does not see).
    public var refreshInterval: RxTimeInterval = .seconds(30)
    /// The bridge's counters are published this often.
    public var statsInterval: RxTimeInterval = .seconds(10)
    /// Event messages kept while the broker is away.
    public var outboxEvents = 10_000
    /// QoS of retained documents (descriptions, states, availability, discovery).
    public var stateQoS: Int32 = 1
    /// QoS of event stream messages.
    public var eventQoS: Int32 = 0
    /// Home Assistant discovery, nil when off.
    public var discovery: Discovery?
    /// Whether evflowd's sensors are watched and published (1.4); watching them is what
    /// makes evflowd read them.
    public var sensors = true
    /// Whether the gestures of the devices' keys are published (docs/mqtt.md, "Gestures"):
    /// their trigger and event topics, and with discovery their device triggers.
    public var gestures = true

    public init(layout: TopicLayout) { self.layout = layout }
}

/// The bridge's logic, free of I/O: what to publish for what evflowd says, what to ask evflowd,
/// what to keep while the broker is away. Every method runs on one serial scheduler (the
/// bridge queue); timers are armed on it, so tests drive it in virtual time.
public final class BridgeCore: @unchecked Sendable {
    public let settings: BridgeSettings
    let scheduler: SchedulerType
    private let log: @Sendable (String) -> Void

    struct Device {
        var info: DeviceInfo
        var described: [UInt8]?
        var discoveryTopics: [String] = []
        var state: [UInt8]?
        /// The battery document last published (BatteryPublishing.swift); nil: none.
        var battery: [UInt8]?
        var gate: MinIntervalGate
        var timer: Disposable?
    }
    /// The described devices (module-internal for BatteryPublishing.swift).
    var devices: [DeviceID: Device] = [:]
    /// The sensors (BridgeCore+Sensors.swift).
    var sensors: [DeviceID: Sensor] = [:]
    var daemon: DaemonRequester?
    private var broker: MessagePublisher?
    private var daemonOnline = false
    private var daemonAnnouncedOffline = false
    /// What evflowd lets the bridge see of keys (its greeting): which keys' gestures are published.
    public private(set) var keys = KeyVisibility.visible
    public private(set) var outbox: Outbox

    /// Counters, published on `<prefix>/bridge/stats`.
    public private(set) var published: UInt64 = 0
    public private(set) var brokerConnects: UInt64 = 0
    public private(set) var daemonConnects: UInt64 = 0
    public private(set) var stateRequests: UInt64 = 0
    public private(set) var eventsBridged: UInt64 = 0

    public init(settings: BridgeSettings, scheduler: SchedulerType, log: @escaping @Sendable (String) -> Void) {
        self.settings = settings
        self.scheduler = scheduler
        self.log = log
        outbox = Outbox(eventCapacity: settings.outboxEvents)
    }

    public var isBrokerConnected: Bool { broker != nil }
    public var isDaemonConnected: Bool { daemon != nil }
    public var deviceIDs: [DeviceID] { devices.keys.sorted() }

    // MARK: evflowd

    /// A new connection to evflowd: list the devices and watch every filtered frame.
    public func daemonConnected(_ d: DaemonRequester, keys: KeyVisibility = .visible) {
        daemon = d
        self.keys = keys
        daemonConnects += 1
        _ = d.send(Request(.devices, tag: .string("devices")))
        _ = d.send(Request(.watch(WatchRequest(sensors: settings.sensors ? ["all"] : [])), tag: .string("evflow-mqtt")))
    }

    /// The connection to evflowd is gone: evflowd is announced offline; devices and their
    /// retained documents stay until evflowd says otherwise.
    public func daemonLost(_ reason: String) {
        daemon = nil
        for id in devices.keys {
            devices[id]!.timer?.dispose()
            devices[id]!.timer = nil
            devices[id]!.gate.reset()
        }
        sensorsDaemonLost()
        if !daemonAnnouncedOffline {
            daemonAnnouncedOffline = true
            daemonOnline = false
            publish(availability(settings.layout.daemonAvailability, online: false))
        }
    }

    /// One message from evflowd's main connection.
    public func daemonMessage(_ m: ServerMessage) {
        switch m {
        case .devices(let list, let sensorList, _):
            sensorsListed(sensorList)
            if !daemonOnline {
                daemonOnline = true
                daemonAnnouncedOffline = false
                publish(availability(settings.layout.daemonAvailability, online: true))
            }
            let present = Set(list.map(\.id))
            for id in devices.keys where !present.contains(id) { remove(id) }
            for info in list { requestState(info.id) }
        case .device(.added(let info)):
            requestState(info.id)
        case .device(.removed(let info)):
            remove(info.id)
        case .device(.inaccessible(let info, let reason)):
            log("evflowd cannot open \(info.name) (\(info.id)): \(reason)")
        case .frame(let f):
            changed(f.device)
        case .state(let report, _):
            stateArrived(report)
        case .sample(let sample):
            sampleArrived(sample)
        case .sensor(let change):
            sensorChanged(change)
        case .battery(let b):
            batteryArrived(b)
        case .error(let e):
            if e.requestClass != "STATE" { log("evflowd: \(e.message)") }   // STATE: the device went away meanwhile
        default:
            break
        }
    }

    /// Asks for every device's state (the periodic refresh).
    public func refreshAll() {
        for id in devices.keys { requestState(id) }
        // Sensors come and go without notices (1.4): the list is asked for again.
        if settings.sensors, let daemon { _ = daemon.send(Request(.devices, tag: .string("devices"))) }
    }

    private func changed(_ id: DeviceID) {
        guard devices[id] != nil else { return }   // new: its STATE is on the way (DEVICES or DEVICE added)
        let now = scheduler.now
        switch devices[id]!.gate.request(now: now) {
        case .now:
            requestState(id)
        case .at(let t):
            devices[id]!.timer = scheduler.schedule(after: RxTimeInterval(nanoseconds: max(0, t - now))) { [weak self] in
                guard let self, self.devices[id] != nil else { return }
                self.devices[id]!.gate.fire(now: self.scheduler.now)
                self.devices[id]!.timer = nil
                self.requestState(id)
            }
        case .pending:
            break
        }
    }

    private func requestState(_ id: DeviceID) {
        guard let daemon else { return }
        stateRequests += 1
        _ = daemon.send(Request(.state(device: id.rawValue), tag: .string("state")))
    }

    private func stateArrived(_ r: DeviceStateReport) {
        let id = r.device.id
        if devices[id] == nil {
            devices[id] = Device(info: r.device, gate: MinIntervalGate(interval: settings.stateInterval.nanoseconds))
        }
        let oldBattery = devices[id]!.info.battery.map(Discovery.BatteryKind.init)
        devices[id]!.info = r.device
        let layout = settings.layout
        let description = Documents.description(r.device, hostname: layout.hostname).bytes
        if devices[id]!.described != description {
            devices[id]!.described = description
            publish(OutMessage(topic: layout.description(id.rawValue), payload: description, kind: .retained, qos: settings.stateQoS))
            publishDiscovery(id)
        } else if r.device.battery.map(Discovery.BatteryKind.init) != oldBattery {
            publishDiscovery(id)   // a battery found, gone, or now a level instead of a percentage
        }
        publishBattery(id)
        let state = Documents.state(r).bytes
        if devices[id]!.state != state {
            devices[id]!.state = state
            publish(OutMessage(topic: layout.state(id.rawValue), payload: state, kind: .retained, qos: settings.stateQoS))
        }
    }

    /// Publishes the device's discovery configs as its `info` makes them, clearing those it
    /// no longer has.
    func publishDiscovery(_ id: DeviceID) {
        guard let d = devices[id] else { return }
        let layout = settings.layout
        let entities = settings.discovery?.entities(for: d.info, layout: layout, visibility: keys) ?? []
        let topics = entities.map { layout.discovery(component: $0.component, object: $0.objectID) }
        for old in d.discoveryTopics where !topics.contains(old) { publish(clear(old)) }
        devices[id]!.discoveryTopics = topics
        for (e, topic) in zip(entities, topics) {
            publish(OutMessage(topic: topic, payload: e.config.bytes, kind: .retained, qos: settings.stateQoS))
        }
    }

    private func remove(_ id: DeviceID) {
        guard let d = devices.removeValue(forKey: id) else { return }
        d.timer?.dispose()
        // Discovery first: Home Assistant's entities read the state topic, and an empty state
        // message reaching them before their config is gone made it log a template error for
        // every entity of the device (seen by scripts/check-home-assistant).
        for t in d.discoveryTopics { publish(clear(t)) }
        if d.battery != nil { publish(clear(settings.layout.battery(id.rawValue))) }
        publish(clear(settings.layout.state(id.rawValue)))
        publish(clear(settings.layout.description(id.rawValue)))
    }

    // MARK: gestures

    /// A gesture from the gestures connection: the key's trigger payload, then the event
    /// entity's document (not retained: a trigger fires once). A gesture of a device the bridge
    /// has not described yet, or of a key it does not publish, is dropped.
    public func gestureArrived(_ g: GestureMessage) {
        guard settings.gestures, let d = devices[g.device],
              let (trigger, event) = GestureTriggers.messages(g, device: d.info, keys: keys, layout: settings.layout) else { return }
        publish(OutMessage(topic: trigger.topic, payload: Array(trigger.payload.utf8), kind: .event, qos: settings.eventQoS))
        publish(OutMessage(topic: event.topic, payload: event.payload.bytes, kind: .event, qos: settings.eventQoS))
        eventsBridged += 1
    }

    // MARK: event streams

    /// A frame from an event stream's connection.
    public func eventFrame(_ f: FrameMessage, spec: EventStreamSpec) {
        let layout = settings.layout
        if spec.perCode {
            for e in f.frame.events {
                let n = EventNaming.standard
                let topic = layout.events(f.device.rawValue, type: n.typeName(e.type) ?? String(e.type),
                                          code: n.codeName(e.type, e.code) ?? String(e.code))
                publish(OutMessage(topic: topic, payload: Documents.event(e).bytes, kind: .event, qos: settings.eventQoS))
                eventsBridged += 1
            }
        } else {
            publish(OutMessage(topic: layout.events(f.device.rawValue), payload: Documents.frame(f.frame).bytes,
                               kind: .event, qos: settings.eventQoS))
            eventsBridged += 1
        }
    }

    // MARK: broker

    /// A new broker session: everything retained is published afresh (bridge online, evflowd's
    /// availability, every device's description, state and discovery), then what the outbox
    /// kept: clears of devices removed meanwhile, then events, oldest first.
    public func brokerConnected(_ p: MessagePublisher) {
        broker = p
        brokerConnects += 1
        let layout = settings.layout
        var fresh: Set<String> = []
        func send(_ m: OutMessage) {
            fresh.insert(m.topic)
            publish(m)
        }
        send(availability(layout.bridgeAvailability, online: true))
        send(availability(layout.daemonAvailability, online: daemonOnline))
        for id in devices.keys.sorted() {
            let d = devices[id]!
            if let desc = d.described {
                send(OutMessage(topic: layout.description(id.rawValue), payload: desc, kind: .retained, qos: settings.stateQoS))
            }
            if let s = d.state {
                send(OutMessage(topic: layout.state(id.rawValue), payload: s, kind: .retained, qos: settings.stateQoS))
            }
            if let b = d.battery {
                send(OutMessage(topic: layout.battery(id.rawValue), payload: b, kind: .retained, qos: settings.stateQoS))
            }
            if let discovery = settings.discovery {
                for e in discovery.entities(for: d.info, layout: layout, visibility: keys) {
                    send(OutMessage(topic: layout.discovery(component: e.component, object: e.objectID), payload: e.config.bytes,
                                    kind: .retained, qos: settings.stateQoS))
                }
            }
        }
        republishSensors(send)
        let (retained, events) = outbox.drain()
        for m in retained where !fresh.contains(m.topic) { publish(m) }
        for m in events { publish(m) }
        if !events.isEmpty || outbox.droppedEvents > 0 {
            log("broker connected: re-published \(fresh.count) retained topics, sent \(events.count) queued events; \(outbox.droppedEvents) events dropped from the outbox since start")
        }
        publishStats()
        refreshAll()
    }

    /// The broker session ended: messages wait in the outbox until the next one.
    public func brokerLost() {
        broker = nil
    }

    /// The bridge's counters as a retained document.
    public func statsDocument() -> JSON {
        .object([
            ("broker_connected", .bool(broker != nil)),
            ("evflowd_connected", .bool(daemon != nil)),
            ("devices", .int(Int64(devices.count))),
            ("sensors", .int(Int64(sensors.count))),
            ("published", .int(Int64(published))),
            ("events_bridged", .int(Int64(eventsBridged))),
            ("outbox_dropped", .int(Int64(outbox.droppedEvents))),
            ("outbox_queued", .int(Int64(outbox.queuedEvents + outbox.queuedRetained))),
            ("outbox_drained", .int(Int64(outbox.drained))),
            ("broker_connects", .int(Int64(brokerConnects))),
            ("evflowd_connects", .int(Int64(daemonConnects))),
            ("state_requests", .int(Int64(stateRequests))),
            ("live_resources", .int(Int64(LiveResources.count))),
        ])
    }

    /// Publishes the counters (only while connected: stale counters are not worth keeping).
    public func publishStats() {
        guard broker != nil else { return }
        publish(OutMessage(topic: settings.layout.bridgeStats, payload: statsDocument().bytes, kind: .retained, qos: 0))
    }

    /// The bridge is stopping: availability offline for both (evflowd's can no longer be known).
    public func stopping() {
        publish(availability(settings.layout.daemonAvailability, online: false))
        publish(availability(settings.layout.bridgeAvailability, online: false))
    }

    func publish(_ m: OutMessage) {
        if let broker, broker.publish(m) {
            published += 1
        } else {
            outbox.enqueue(m)
        }
    }

    private func availability(_ topic: String, online: Bool) -> OutMessage {
        OutMessage(topic: topic, payload: Array((online ? "online" : "offline").utf8), kind: .retained, qos: settings.stateQoS)
    }

    func clear(_ topic: String) -> OutMessage {
        OutMessage(topic: topic, payload: [], kind: .retained, qos: settings.stateQoS)
    }
}
