import EvflowProtocol
import InputModel

// A device's battery on MQTT (protocol 1.8; docs/mqtt.md, "Battery"): a retained document on
// `<prefix>/devices/<id>/battery`, and with discovery one diagnostic `sensor` reading it.

extension Documents {
    /// A device's retained battery document: the summary's `battery` member as evflowd sends
    /// it, `{"percent":73,"status":"discharging","supply":"hid-aa:bb:cc:dd:ee:ff-battery"}`,
    /// or with `level` in place of `percent` for a driver that gives only a level.
    public static func battery(_ b: DeviceBattery) -> JSON {
        var m: [(String, JSON)] = []
        if let p = b.percent {
            m.append(("percent", .int(Int64(p))))
        } else if let l = b.level {
            m.append(("level", .string(l.rawValue)))
        }
        m.append(("status", .string(b.status.rawValue)))
        m.append(("supply", .string(b.supply)))
        return .object(m)
    }
}

extension Discovery {
    /// Which battery entity a reading makes: a percentage, or only a level. A reading that
    /// changes from one to the other changes the device's discovery (the entity is replaced).
    enum BatteryKind: Hashable {
        case percent, level
        init(_ b: DeviceBattery) { self = b.percent != nil ? .percent : .level }
    }

    /// The battery entity's object id suffix, name and members (beside the shared ones):
    ///
    /// - a percentage: `<id>_battery`, "Battery", `device_class` battery, unit `%`,
    ///   `state_class` measurement;
    /// - a driver that gives only a level (`capacity_level`): `<id>_battery_level`, "Battery
    ///   level", an `enum` sensor of the six levels — no percentage is made up for it.
    ///
    /// Both are diagnostic and carry the document's members (`status`, `supply`) as
    /// attributes (`json_attributes_topic`): the charging status is the `status` attribute.
    static func batteryEntity(_ b: DeviceBattery, topic: String) -> (suffix: String, name: String, extra: [(String, JSON)]) {
        let attributes: [(String, JSON)] = [
            ("json_attributes_topic", .string(topic)),
            ("entity_category", .string("diagnostic")),
        ]
        switch BatteryKind(b) {
        case .percent:
            return ("battery", "Battery", [
                ("value_template", .string("{{ value_json.percent }}")),
                ("device_class", .string("battery")),
                ("unit_of_measurement", .string("%")),
                ("state_class", .string("measurement")),
            ] + attributes)
        case .level:
            return ("battery_level", "Battery level", [
                ("value_template", .string("{{ value_json.level }}")),
                ("device_class", .string("enum")),
                ("options", .array(DeviceBattery.Level.allCases.map { .string($0.rawValue) })),
                ("icon", .string("mdi:battery")),
            ] + attributes)
        }
    }
}

extension BridgeCore {
    /// `BATTERY` (1.8): a described device's battery changed. Its discovery changes only when
    /// the kind of reading does (percent ↔ level); the document is published when it differs.
    /// A device the bridge has not described yet is skipped: its `STATE`, on the way, carries
    /// the reading.
    func batteryArrived(_ m: BatteryMessage) {
        guard devices[m.device] != nil else { return }
        let old = devices[m.device]!.info.battery
        devices[m.device]!.info.battery = m.battery
        if old.map(Discovery.BatteryKind.init) != Discovery.BatteryKind(m.battery) { publishDiscovery(m.device) }
        publishBattery(m.device)
    }

    /// Publishes the device's battery document if it changed; clears the topic when the
    /// device no longer has a battery (after its discovery lost the entity).
    func publishBattery(_ id: DeviceID) {
        guard let d = devices[id] else { return }
        let doc = d.info.battery.map { Documents.battery($0).bytes }
        guard doc != d.battery else { return }
        devices[id]!.battery = doc
        publish(OutMessage(topic: settings.layout.battery(id.rawValue), payload: doc ?? [], kind: .retained, qos: settings.stateQoS))
    }
}
