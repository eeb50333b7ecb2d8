import EvflowProtocol
import InputModel

/// Gestures as Home Assistant sees them (docs/mqtt.md, "Gestures"): per device, one MQTT
/// device trigger per key × gesture (`device_automation` discovery, published with the device's
/// other entities, so before any press) and one `event` entity carrying every gesture.
///
/// - Trigger topic `<prefix>/devices/<id>/gestures/<CODE>`, payload the gesture (`double`):
///   every trigger of a key shares its topic and is told apart by `payload`. A rotary step's
///   payload is a document, `{"gesture":"rotate_right","count":3}`, its triggers telling
///   the directions apart by `value_template` (the count stays in `trigger.payload_json`).
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
        case .rotateRight: "rotate_right"
        case .rotateLeft: "rotate_left"
        }
    }

    /// The rotary codes of `d` whose steps the bridge publishes (never hidden: no key).
    public static func rotaryCodes(of d: DeviceInfo) -> [UInt16] {
        guard let g = d.gestures, !g.rotaryKinds.isEmpty else { return [] }
        return g.rotary
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
        let g = m.event.gesture
        let published = g.isRotation ? rotaryCodes(of: d) : codes(of: d, keys: keys)
        guard published.contains(m.event.code), d.gestures?.kinds.contains(g) == true else { return nil }
        let code = naming.codeName(g.eventType, m.event.code) ?? String(m.event.code)
        let event: JSON = .object([
            ("event_type", .string(eventType(code: code, m.event.gesture))),
            ("code", .string(code)),
            ("gesture", .string(m.event.gesture.rawValue)),
            ("count", .int(Int64(m.event.count))),
            ("time", .int(m.event.time)),
        ])
        let payload = g.isRotation ? JSON.object([("gesture", .string(g.rawValue)), ("count", .int(Int64(m.event.count)))]).text
                                   : g.rawValue
        return ((layout.gestureTrigger(d.id.rawValue, code: code), payload),
                (layout.gestureEvents(d.id.rawValue), event))
    }
}

extension Discovery {
    /// The device triggers and the event entity of `d`'s gestures (none when it has none the
    /// bridge may publish). `deviceBlock` and `availability` are the device's other entities'.
    func gestureEntities(for d: DeviceInfo, layout: TopicLayout, keys: KeyVisibility, naming: EventNaming,
                         deviceBlock: JSON, availability: [(String, JSON)], base: String, host: String) -> [Entity] {
        let codes = GestureTriggers.codes(of: d, keys: keys), rotary = GestureTriggers.rotaryCodes(of: d)
        guard gestures, !codes.isEmpty || !rotary.isEmpty, let described = d.gestures else { return [] }
        let dev = TopicLayout.objectID(d.id.rawValue)
        var out: [Entity] = []
        var eventTypes: [JSON] = []
        let pairs = codes.map { (EventType.key, $0, described.keyKinds) } + rotary.map { (EventType.rel, $0, described.rotaryKinds) }
        for (type, c, kinds) in pairs {
            let code = naming.codeName(type, c) ?? String(c)
            for g in kinds {
                eventTypes.append(.string(GestureTriggers.eventType(code: code, g)))
                // Device triggers have no unique_id: Home Assistant knows each by its discovery
                // topic, which is stable (host, device id, code, gesture), and by type + subtype,
                // unique per device.
                var config: [(String, JSON)] = [
                    ("automation_type", .string("trigger")),
                    ("topic", .string(layout.gestureTrigger(d.id.rawValue, code: code))),
                    ("type", .string(GestureTriggers.triggerType(g))),
                    ("subtype", .string(code)),
                    ("payload", .string(g.rawValue)),
                ]
                // A step's payload is a document (its count); the trigger matches its gesture.
                if g.isRotation { config.append(("value_template", .string("{{ value_json.gesture }}"))) }
                config.append(("device", deviceBlock))
                out.append(Entity(component: "device_automation", objectID: "\(dev)_\(TopicLayout.objectID(code))_\(g.rawValue)",
                                  config: .object(config)))
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
