import EvflowProtocol
import InputModel

/// Home Assistant MQTT discovery (docs/mqtt.md, "Home Assistant"): one retained config per
/// entity under `<discovery prefix>/<component>/evflow_<host>/<object id>/config`, reading the
/// device's state document.
///
/// - every switch a device has (`SW_*`) becomes a `binary_sensor` (lid: device class
///   `opening`, on when open; dock: `plug`, on when docked; tablet mode and others: on at 1);
/// - chosen keys and buttons (`--ha-key`) a device has become `binary_sensor`s, on while down;
/// - the device's counters (`events_in`, `events_out`, `dropped_total`, `syn_dropped`)
///   become `sensor`s with `state_class` `total_increasing`;
/// - the gestures of its keys become device triggers and an `event` entity (`GestureTriggers`);
/// - each key with gestures gets a wear `sensor` (with the counters): the chatter filter's
///   drops of that key, `entity_category` diagnostic, so a switch wearing out shows up;
/// - a device with a battery (protocol 1.8) gets a battery `sensor` reading its battery
///   document (`batteryEntity`, BatteryPublishing.swift).
///
/// Entities are available only while both the bridge and evflowd are (`availability_mode` all).
public struct Discovery: Sendable {
    /// `EV_KEY` codes to expose as binary sensors, for devices that have them.
    public var keys: [UInt16]
    /// Whether the counters are exposed as sensors.
    public var counters: Bool
    /// Whether gestures become device triggers and an event entity (GestureTriggers.swift).
    public var gestures: Bool

    public init(keys: [UInt16] = [], counters: Bool = true, gestures: Bool = true) {
        self.keys = keys
        self.counters = counters
        self.gestures = gestures
    }

    /// One entity.
    public struct Entity: Hashable, Sendable {
        public var component: String
        public var objectID: String
        public var config: JSON
    }

    /// The entities of one device; `visibility`: what the bridge may see of keys (its greeting's).
    public func entities(for d: DeviceInfo, layout: TopicLayout, visibility: KeyVisibility = .visible,
                         naming: EventNaming = .standard) -> [Entity] {
        let dev = TopicLayout.objectID(d.id.rawValue)
        let host = TopicLayout.objectID(layout.hostname)
        let base = "evflow_\(host)_\(dev)"
        let deviceBlock: JSON = .object([
            ("identifiers", .array([.string(base)])),
            ("name", .string("\(d.name) (\(layout.hostname))")),
            ("manufacturer", .string("evflow")),
            ("model", .string("\(Documents.hex4(d.inputID.vendor)):\(Documents.hex4(d.inputID.product)) \(d.name)")),
        ])
        let availability: [(String, JSON)] = [
            ("availability", .array([.object([("topic", .string(layout.bridgeAvailability))]),
                                     .object([("topic", .string(layout.daemonAvailability))])])),
            ("availability_mode", .string("all")),
        ]
        func entity(_ component: String, _ suffix: String, name: String, stateTopic: String? = nil,
                    extra: [(String, JSON)]) -> Entity {
            let object = "\(dev)_\(TopicLayout.objectID(suffix))"
            var m: [(String, JSON)] = [
                ("name", .string(name)),
                ("unique_id", .string("\(base)_\(TopicLayout.objectID(suffix))")),
                ("object_id", .string("evflow_\(host)_\(object)")),
                ("state_topic", .string(stateTopic ?? layout.state(d.id.rawValue))),
            ]
            m += extra
            m += availability
            m.append(("device", deviceBlock))
            return Entity(component: component, objectID: object, config: .object(m))
        }
        var out: [Entity] = []
        for sw in (d.capabilities[EventType.sw] ?? []).sorted() {
            let code = naming.codeName(EventType.sw, sw) ?? String(sw)
            var name = code
            var onWhen = 1
            var cls: String?
            switch code {
            case "SW_LID": name = "Lid"; cls = "opening"; onWhen = 0      // SW_LID 1 = closed
            case "SW_TABLET_MODE": name = "Tablet mode"
            case "SW_DOCK": name = "Dock"; cls = "plug"
            default: break
            }
            var extra: [(String, JSON)] = [
                ("value_template", .string("{{ 'ON' if value_json.switches.get('\(code)', \(1 - onWhen)) == \(onWhen) else 'OFF' }}")),
                ("payload_on", .string("ON")), ("payload_off", .string("OFF")),
            ]
            if let cls { extra.append(("device_class", .string(cls))) }
            out.append(entity("binary_sensor", code, name: name, extra: extra))
        }
        let has = d.capabilities[EventType.key] ?? []
        for key in keys where has.contains(key) {
            let code = naming.codeName(EventType.key, key) ?? String(key)
            out.append(entity("binary_sensor", code, name: code, extra: [
                ("value_template", .string("{{ 'ON' if '\(code)' in value_json.keys_down else 'OFF' }}")),
                ("payload_on", .string("ON")), ("payload_off", .string("OFF")),
            ]))
        }
        if counters {
            for (field, name) in [("events_in", "Events in"), ("events_out", "Events out"),
                                  ("dropped_total", "Events filtered"), ("syn_dropped", "Buffer overruns")] {
                out.append(entity("sensor", field, name: name, extra: [
                    ("value_template", .string("{{ value_json.counters.\(field) }}")),
                    ("state_class", .string("total_increasing")),
                    ("unit_of_measurement", .string(field == "syn_dropped" ? "overruns" : "events")),
                    ("entity_category", .string("diagnostic")),
                ]))
            }
            // Wear: the keys a person presses as buttons (those with gestures), by the same
            // privacy rule as their triggers; a full keyboard would make a hundred sensors.
            for c in GestureTriggers.codes(of: d, keys: visibility) {
                let code = naming.codeName(EventType.key, c) ?? String(c)
                out.append(entity("sensor", "\(code)_chatter", name: "\(code) chatter", extra: [
                    ("value_template", .string("{{ value_json.counters.chatter.get('\(code)', 0) }}")),
                    ("state_class", .string("total_increasing")),
                    ("unit_of_measurement", .string("bounces")),
                    ("entity_category", .string("diagnostic")),
                    ("icon", .string("mdi:gesture-tap-button")),
                ]))
            }
        }
        if let battery = d.battery {
            let (suffix, name, extra) = Self.batteryEntity(battery, topic: layout.battery(d.id.rawValue))
            out.append(entity("sensor", suffix, name: name, stateTopic: layout.battery(d.id.rawValue), extra: extra))
        }
        out += gestureEntities(for: d, layout: layout, keys: visibility, naming: naming, deviceBlock: deviceBlock,
                               availability: availability, base: base, host: host)
        return out
    }
}
