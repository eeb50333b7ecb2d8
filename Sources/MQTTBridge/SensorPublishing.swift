import EvflowProtocol
import InputModel
import Reactive

// Sensors on MQTT (docs/mqtt.md, "Sensors"): a retained description and state document per
// sensor, and Home Assistant `sensor` entities per channel with the device class and unit
// Home Assistant expects.

extension TopicLayout {
    /// A sensor's retained description.
    public func sensorDescription(_ sensor: String) -> String { prefix + "/sensors/" + TopicLayout.segment(sensor) + "/description" }
    /// A sensor's retained state document (its last filtered values).
    public func sensorState(_ sensor: String) -> String { prefix + "/sensors/" + TopicLayout.segment(sensor) + "/state" }
}

extension Documents {
    /// A sensor's retained description: what `DEVICES` says of it.
    public static func sensorDescription(_ s: SensorInfo, hostname: String) -> JSON {
        var m: [(String, JSON)] = [("id", .string(s.id.rawValue)), ("name", .string(s.name)), ("host", .string(hostname)),
                                   ("sysname", .string(s.sysname)), ("reading", .string(s.buffered ? "buffered" : "polled"))]
        m.append(("channels", .array(s.channels.map { c in
            .object([("name", .string(c.name)), ("quantity", .string(c.quantity.rawValue)), ("unit", .string(c.unit))])
        })))
        return .object(m)
    }

    /// A sensor's retained state: its last filtered sample, values by channel name in units,
    /// and an accelerometer's orientation when evflowd decides it.
    public static func sensorState(_ s: SensorInfo, time: Int64, values: [String: Double], orientation: String? = nil) -> JSON {
        var m: [(String, JSON)] = [
            ("sensor", .string(s.id.rawValue)),
            ("time", .int(time)),
            ("values", .object(s.channels.compactMap { c in values[c.name].map { (c.name, JSON.number($0)) } })),
        ]
        if let orientation { m.append(("orientation", .string(orientation))) }
        return .object(m)
    }
}

extension Discovery {
    /// Home Assistant's device class for a quantity, when it has one (its units: lx, °C, kPa, %).
    public static func deviceClass(_ q: SensorQuantity) -> String? {
        switch q {
        case .illuminance: "illuminance"
        case .temp: "temperature"
        case .pressure: "pressure"
        case .humidityrelative: "humidity"
        case .accel, .anglvel, .intensity, .proximity, .magn: nil
        }
    }

    /// The orientations evflowd reports (iio-sensor-proxy's names): an `enum` sensor's options.
    public static let orientations = ["undefined", "normal", "bottom-up", "left-up", "right-up", "face-up", "face-down"]

    /// One `sensor` entity per channel of `s`, reading its state document: the channel's unit,
    /// Home Assistant's device class where there is one, `state_class` `measurement`; for an
    /// accelerometer (`accel_x`, `accel_y`, `accel_z`) also its orientation, an `enum` sensor.
    public func sensorEntities(for s: SensorInfo, layout: TopicLayout) -> [Entity] {
        let dev = TopicLayout.objectID(s.id.rawValue)
        let host = TopicLayout.objectID(layout.hostname)
        let base = "evflow_\(host)_\(dev)"
        let deviceBlock: JSON = .object([
            ("identifiers", .array([.string(base)])),
            ("name", .string("\(s.name) (\(layout.hostname))")),
            ("manufacturer", .string("evflow")),
            ("model", .string("IIO \(s.name)")),
        ])
        func entity(_ suffix: String, _ members: [(String, JSON)]) -> Entity {
            let object = "\(dev)_\(TopicLayout.objectID(suffix))"
            var m: [(String, JSON)] = [
                ("name", .string(suffix)),
                ("unique_id", .string("\(base)_\(TopicLayout.objectID(suffix))")),
                ("object_id", .string("evflow_\(host)_\(object)")),
                ("state_topic", .string(layout.sensorState(s.id.rawValue))),
            ]
            m += members
            m.append(("availability", .array([.object([("topic", .string(layout.bridgeAvailability))]),
                                              .object([("topic", .string(layout.daemonAvailability))])])))
            m.append(("availability_mode", .string("all")))
            m.append(("device", deviceBlock))
            return Entity(component: "sensor", objectID: object, config: .object(m))
        }
        var out = s.channels.map { c in
            var m: [(String, JSON)] = [
                ("value_template", .string("{{ value_json['values']['\(c.name)'] }}")),
                ("state_class", .string("measurement")),
            ]
            if !c.unit.isEmpty { m.append(("unit_of_measurement", .string(c.unit))) }
            if let cls = Self.deviceClass(c.quantity) { m.append(("device_class", .string(cls))) }
            return entity(c.name, m)
        }
        if Set(s.channels.map(\.name)).isSuperset(of: ["accel_x", "accel_y", "accel_z"]) {
            out.append(entity("orientation", [
                ("value_template", .string("{{ value_json.orientation | default('undefined') }}")),
                ("device_class", .string("enum")),
                ("options", .array(Self.orientations.map { .string($0) })),
            ]))
        }
        return out
    }
}

extension BridgeCore {
    /// One sensor the bridge publishes.
    struct Sensor {
        var info: SensorInfo
        var discoveryTopics: [String] = []
        /// The last filtered sample not yet published, or published.
        var time: Int64 = 0
        var values: [String: Double] = [:]
        var orientation: String?
        var state: [UInt8]?
        var gate: MinIntervalGate
        var timer: Disposable?
    }

    /// `DEVICES`' sensors: new ones are described (and discovered), gone ones cleared.
    func sensorsListed(_ list: [SensorInfo]) {
        guard settings.sensors else { return }
        let present = Set(list.map(\.id))
        for id in sensors.keys where !present.contains(id) { removeSensor(id) }
        let layout = settings.layout
        for info in list where sensors[info.id]?.info != info {
            if let old = sensors[info.id] { old.timer?.dispose() }
            var sensor = Sensor(info: info, gate: MinIntervalGate(interval: settings.stateInterval.nanoseconds))
            publish(OutMessage(topic: layout.sensorDescription(info.id.rawValue),
                               payload: Documents.sensorDescription(info, hostname: layout.hostname).bytes,
                               kind: .retained, qos: settings.stateQoS))
            let entities = settings.discovery?.sensorEntities(for: info, layout: layout) ?? []
            sensor.discoveryTopics = entities.map { layout.discovery(component: $0.component, object: $0.objectID) }
            for (e, topic) in zip(entities, sensor.discoveryTopics) {
                publish(OutMessage(topic: topic, payload: e.config.bytes, kind: .retained, qos: settings.stateQoS))
            }
            sensors[info.id] = sensor
        }
    }

    /// A filtered `SAMPLE`: the sensor's state document, at most once per `stateInterval`
    /// (the first at once, then the latest values at the interval's end).
    func sampleArrived(_ m: SampleMessage) {
        guard settings.sensors, m.stream == .filtered else { return }
        guard sensors[m.device] != nil else {
            // A sensor that came after the last DEVICES: ask for the list (it describes it).
            if let daemon { _ = daemon.send(Request(.devices, tag: .string("devices"))) }
            return
        }
        sensors[m.device]!.time = m.time
        sensors[m.device]!.values = m.values
        if let o = m.orientation { sensors[m.device]!.orientation = o }
        let id = m.device
        let now = scheduler.now
        switch sensors[id]!.gate.request(now: now) {
        case .now:
            publishSensorState(id)
        case .at(let t):
            sensors[id]!.timer = scheduler.schedule(after: RxTimeInterval(nanoseconds: max(0, t - now))) { [weak self] in
                guard let self, self.sensors[id] != nil else { return }
                self.sensors[id]!.gate.fire(now: self.scheduler.now)
                self.sensors[id]!.timer = nil
                self.publishSensorState(id)
            }
        case .pending:
            break
        }
    }

    private func publishSensorState(_ id: DeviceID) {
        guard let s = sensors[id] else { return }
        let state = Documents.sensorState(s.info, time: s.time, values: s.values, orientation: s.orientation).bytes
        guard state != s.state else { return }
        sensors[id]!.state = state
        publish(OutMessage(topic: settings.layout.sensorState(id.rawValue), payload: state, kind: .retained, qos: settings.stateQoS))
    }

    private func removeSensor(_ id: DeviceID) {
        guard let s = sensors.removeValue(forKey: id) else { return }
        s.timer?.dispose()
        // Discovery first, as for a device (BridgeCore.remove): no entity reads an empty state.
        for t in s.discoveryTopics { publish(clear(t)) }
        publish(clear(settings.layout.sensorState(id.rawValue)))
        publish(clear(settings.layout.sensorDescription(id.rawValue)))
    }

    /// A `SENSOR` notice: a new sensor is described by asking for the list again; a gone one
    /// has its topics cleared.
    func sensorChanged(_ change: SensorChange) {
        guard settings.sensors else { return }
        switch change {
        case .added: if let daemon { _ = daemon.send(Request(.devices, tag: .string("devices"))) }
        case .removed(let info): removeSensor(info.id)
        }
    }

    /// evflowd went away: pending publications are dropped (the values stay retained).
    func sensorsDaemonLost() {
        for id in sensors.keys {
            sensors[id]!.timer?.dispose()
            sensors[id]!.timer = nil
            sensors[id]!.gate.reset()
        }
    }

    /// A new broker session: every sensor's description, discovery and state again.
    func republishSensors(_ send: (OutMessage) -> Void) {
        let layout = settings.layout
        for id in sensors.keys.sorted() {
            let s = sensors[id]!
            send(OutMessage(topic: layout.sensorDescription(id.rawValue),
                            payload: Documents.sensorDescription(s.info, hostname: layout.hostname).bytes,
                            kind: .retained, qos: settings.stateQoS))
            if let state = s.state {
                send(OutMessage(topic: layout.sensorState(id.rawValue), payload: state, kind: .retained, qos: settings.stateQoS))
            }
            for e in settings.discovery?.sensorEntities(for: s.info, layout: layout) ?? [] {
                send(OutMessage(topic: layout.discovery(component: e.component, object: e.objectID), payload: e.config.bytes,
                                kind: .retained, qos: settings.stateQoS))
            }
        }
    }
}
