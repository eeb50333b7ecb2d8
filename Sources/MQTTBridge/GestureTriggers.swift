import EvflowProtocol
import InputModel

/// Gestures as Home Assistant sees them (docs/mqtt.md, "Gestures"): per device, one MQTT
/// device trigger per key × gesture (`device_automation` discovery, published with the device's
/// other entities, so before any press) and one `event` entity carrying every gesture.
///
/// - Trigger topic `<prefix>/devices/<id>/gestures/<CODE>`, payload the gesture (`double`):
///   every trigger of a key shares its topic and is told apart by `payload`.
/// - Event topic `<prefix>/devices/<id>/gesture`: `{"event_type":"KEY_F13_double",…}`.
///
/// Key privacy (docs/protocol.md §7): a key's gestures are offered only when the bridge may see
/// keys, or for buttons and non-text keys (`KeyPrivacy.hidesGesture`).
public enum GestureTriggers {
    /// Home Assistant's trigger `type` of each gesture: its own names for the four it knows
    /// (`button_short_press`, `button_double_press`, `button_triple_press`,
    /// `button_long_press`), ours in the same form for the others.
    public static func triggerType(_ g: GestureKind) -> String {
        switch g {
        case .single: "button_short_press"
        case .double: "button_double_press"
        case .triple: "button_triple_press"
        case .long: "button_long_press"
        case .press: "button_press"
        case .release: "button_release"
        case .hold: "button_hold"
        }
    }

    /// The keys of `d` whose gestures the bridge publishes: those evflowd computes gestures for
    /// (`DeviceInfo.gestures`), less keys the bridge may not see.
    public static func codes(of d: DeviceInfo, keys: KeyVisibility) -> [UInt16] {
        guard let g = d.gestures, !g.kinds.isEmpty else { return [] }
        return g.codes.filter { keys == .visible || !KeyPrivacy.hidesGesture(code: $0) }
    }

    /// The event entity's `event_type` of a key's gesture: `KEY_F13_double`.
    public static func eventType(code: String, _ g: GestureKind) -> String { code + "_" + g.rawValue }

    /// What a gesture publishes: the trigger's payload on the key's topic, then the event
    /// entity's document (nil for a key the bridge does not publish).
    public static func messages(_ m: GestureMessage, device d: DeviceInfo, keys: KeyVisibility, layout: TopicLayout,
                                naming: EventNaming = .standard) -> (trigger: (topic: String, payload: String), event: (topic: String, payload: JSON))? {
        guard codes(of: d, keys: keys).contains(m.event.code), d.gestures?.kinds.contains(m.event.gesture) == true else { return nil }
        let code = naming.codeName(EventType.key, m.event.code) ?? String(m.event.code)
        let event: JSON = .object([
            ("event_type", .string(eventType(code: code, m.event.gesture))),
            ("code", .string(code)),
            ("gesture", .string(m.event.gesture.rawValue)),
            ("count", .int(Int64(m.event.count))),
            ("time", .int(m.event.time)),
        ])
        return ((layout.gestureTrigger(d.id.rawValue, code: code), m.event.gesture.rawValue),
                (layout.gestureEvents(d.id.rawValue), event))
    }
}

extension Discovery {
    /// The device triggers and the event entity of `d`'s gestures (none when it has none the
    /// bridge may publish). `deviceBlock` and `availability` are the device's other entities'.
    func gestureEntities(for d: DeviceInfo, layout: TopicLayout, keys: KeyVisibility, naming: EventNaming,
                         deviceBlock: JSON, availability: [(String, JSON)], base: String, host: String) -> [Entity] {
        let codes = GestureTriggers.codes(of: d, keys: keys)
        guard gestures, !codes.isEmpty, let kinds = d.gestures?.kinds else { return [] }
        let dev = TopicLayout.objectID(d.id.rawValue)
        var out: [Entity] = []
        var eventTypes: [JSON] = []
        for c in codes {
            let code = naming.codeName(EventType.key, c) ?? String(c)
            for g in kinds {
                eventTypes.append(.string(GestureTriggers.eventType(code: code, g)))
                // Device triggers have no unique_id: Home Assistant knows each by its discovery
                // topic, which is stable (host, device id, code, gesture), and by type + subtype,
                // unique per device.
                out.append(Entity(component: "device_automation", objectID: "\(dev)_\(TopicLayout.objectID(code))_\(g.rawValue)",
                                  config: .object([
                                      ("automation_type", .string("trigger")),
                                      ("topic", .string(layout.gestureTrigger(d.id.rawValue, code: code))),
                                      ("type", .string(GestureTriggers.triggerType(g))),
                                      ("subtype", .string(code)),
                                      ("payload", .string(g.rawValue)),
                                      ("device", deviceBlock),
                                  ])))
            }
        }
        var event: [(String, JSON)] = [
            ("name", .string("Gestures")),
            ("unique_id", .string("\(base)_gestures")),
            ("object_id", .string("evflow_\(host)_\(dev)_gestures")),
            ("state_topic", .string(layout.gestureEvents(d.id.rawValue))),
            ("event_types", .array(eventTypes)),
        ]
        event += availability
        event.append(("device", deviceBlock))
        out.append(Entity(component: "event", objectID: "\(dev)_gestures", config: .object(event)))
        return out
    }
}

extension TopicLayout {
    /// A key's gesture trigger topic: the payload is the gesture (`double`).
    public func gestureTrigger(_ device: String, code: String) -> String {
        prefix + "/devices/" + TopicLayout.segment(device) + "/gestures/" + TopicLayout.segment(code)
    }
    /// A device's gesture events (the `event` entity's state topic).
    public func gestureEvents(_ device: String) -> String { prefix + "/devices/" + TopicLayout.segment(device) + "/gesture" }
}
