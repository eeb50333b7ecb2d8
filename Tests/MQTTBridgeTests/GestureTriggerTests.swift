import Foundation
import EvflowProtocol
import InputModel
import Reactive
import ReactiveTesting
import Testing
@testable import MQTTBridge

// Gestures in Home Assistant (docs/mqtt.md, "Gestures"): one device trigger per key × gesture
// and one event entity per device, published with the device's discovery (before any press),
// filtered by key privacy; a gesture publishes its trigger's payload and the event document.

private let keyF13: UInt16 = 183, keyA: UInt16 = 30, btn0: UInt16 = 0x100

/// A macro pad with gestures on KEY_F13 (non-text), KEY_A (text) and BTN_0.
private func pad(uniq: String = "aa:bb:cc:dd:ee:ff", kinds: [GestureKind] = [.single, .double, .long]) -> DeviceInfo {
    var d = DeviceInfo(name: "Macro Pad", inputID: InputID(bustype: 5, vendor: 0x1234, product: 0xabcd, version: 1),
                       uniq: uniq, classes: [.key], capabilities: [EventType.key: [keyF13, keyA, btn0]])
    d.gestures = DeviceGestures(codes: [keyF13, keyA, btn0], kinds: kinds)
    return d
}

private func object(_ j: JSON) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(j.bytes)) as? [String: Any])
}

@Suite(.ownLiveResources) struct GestureDiscoveryTests {
    let layout = try! TopicLayout(hostname: "panel")

    @Test func oneTriggerPerKeyAndGestureAndOneEventEntity() throws {
        let d = pad()
        let entities = Discovery(counters: false).entities(for: d, layout: layout)
        let triggers = entities.filter { $0.component == "device_automation" }
        #expect(triggers.count == 3 * 3)
        let dev = TopicLayout.objectID(d.id.rawValue)
        let double = try #require(triggers.first { $0.objectID == "\(dev)_key_f13_double" })
        let config = try object(double.config)
        #expect(config["automation_type"] as? String == "trigger")
        #expect(config["topic"] as? String == "evflow/panel/devices/\(d.id.rawValue)/gestures/KEY_F13")
        #expect(config["type"] as? String == "button_double_press")
        #expect(config["subtype"] as? String == "KEY_F13")
        #expect(config["payload"] as? String == "double")
        let device = try #require(config["device"] as? [String: Any])
        #expect(device["identifiers"] as? [String] == ["evflow_panel_\(dev)"])
        #expect(layout.discovery(component: double.component, object: double.objectID)
            == "homeassistant/device_automation/evflow_panel/\(dev)_key_f13_double/config")
        // type + subtype are unique per device, as Home Assistant requires
        let pairs = try triggers.map { t -> String in
            let c = try object(t.config)
            return "\(c["type"]!) \(c["subtype"]!)"
        }
        #expect(Set(pairs).count == pairs.count)

        let event = try object(try #require(entities.first { $0.component == "event" }).config)
        #expect(event["state_topic"] as? String == "evflow/panel/devices/\(d.id.rawValue)/gesture")
        #expect(event["event_types"] as? [String] == ["KEY_A_single", "KEY_A_double", "KEY_A_long",
                                                      "KEY_F13_single", "KEY_F13_double", "KEY_F13_long",
                                                      "BTN_0_single", "BTN_0_double", "BTN_0_long"])
        #expect(event["unique_id"] as? String == "evflow_panel_\(dev)_gestures")
        #expect(event["availability_mode"] as? String == "all")
    }

    @Test func hiddenKeysOfferButtonsAndNonTextKeysOnly() throws {
        let entities = Discovery(counters: false).entities(for: pad(), layout: layout, visibility: .hidden)
        let subtypes = Set(try entities.filter { $0.component == "device_automation" }.map { try object($0.config)["subtype"] as! String })
        #expect(subtypes == ["KEY_F13", "BTN_0"])
        #expect(GestureTriggers.codes(of: pad(), keys: .hidden) == [keyF13, btn0])
    }

    @Test func noGesturesNoTriggers() {
        var d = pad()
        d.gestures = nil
        #expect(Discovery(counters: false).entities(for: d, layout: layout).isEmpty)
        #expect(Discovery(counters: false, gestures: false).entities(for: pad(), layout: layout).isEmpty)
    }

    @Test func theTriggerTypesAreHomeAssistantsWhereItHasThem() {
        #expect(GestureKind.allCases.map(GestureTriggers.triggerType) == [
            "button_press", "button_release", "button_short_press", "button_double_press", "button_triple_press",
            "button_long_press", "button_hold"])
    }

    @Test func identityFollowsTheDeviceIDTwoIdenticalDevicesAreTwoDevices() throws {
        // The same device back after Bluetooth sleep or re-pairing (same name, phys, uniq): the same
        // id, so the same discovery topics and identifiers.
        let before = Discovery(counters: false).entities(for: pad(), layout: layout)
        let after = Discovery(counters: false).entities(for: pad(), layout: layout)
        #expect(before.map(\.objectID) == after.map(\.objectID))
        #expect(before.map(\.config) == after.map(\.config))
        // Two identical pads: evflowd gives the second `#2` (DeviceID.distinct), another HA device.
        var twin = pad()
        let original = twin.id
        twin.id = twin.id.distinct { $0 == original }   // `…#2`, as the hub names the second
        let one = try object(before.first { $0.component == "event" }!.config)["device"] as! [String: Any]
        let two = try object(Discovery(counters: false).entities(for: twin, layout: layout).first { $0.component == "event" }!.config)["device"] as! [String: Any]
        #expect(one["identifiers"] as? [String] != two["identifiers"] as? [String])
    }
}

@Suite(.serialized, .ownLiveResources) struct GestureBridgeTests {
    let layout = try! TopicLayout(hostname: "h")

    func core(_ s: VirtualTimeScheduler) -> BridgeCore {
        var settings = BridgeSettings(layout: layout)
        settings.discovery = Discovery(counters: false)
        return BridgeCore(settings: settings, scheduler: s, log: { _ in })
    }

    @Test func triggersAreDiscoveredBeforeAnyPressAndAGestureFiresItsTrigger() throws {
        let s = VirtualTimeScheduler()
        let c = core(s)
        let broker = FakeBroker(), daemon = FakeDaemon()
        c.brokerConnected(broker)
        c.daemonConnected(daemon, keys: .visible)
        let d = pad()
        c.daemonMessage(.devices([d], tag: nil))
        c.daemonMessage(.state(DeviceStateReport(device: d), tag: nil))
        let triggers = broker.messages.filter { $0.topic.hasPrefix("homeassistant/device_automation/") }
        #expect(triggers.count == 9)
        #expect(triggers.allSatisfy { $0.retain && $0.qos == 1 })
        let n = broker.messages.count

        c.gestureArrived(GestureMessage(device: d.id, event: GestureEvent(time: 7, code: keyF13, gesture: .double, count: 2)))
        let fired = broker.messages[n...]
        #expect(fired.map(\.topic) == [layout.gestureTrigger(d.id.rawValue, code: "KEY_F13"), layout.gestureEvents(d.id.rawValue)])
        #expect(fired.allSatisfy { !$0.retain })
        #expect(broker.payload(layout.gestureTrigger(d.id.rawValue, code: "KEY_F13")) == "double")
        #expect(broker.payload(layout.gestureEvents(d.id.rawValue))
            == #"{"event_type":"KEY_F13_double","code":"KEY_F13","gesture":"double","count":2,"time":7}"#)

        // A gesture not offered (press is not configured here) and one of an unknown device: nothing.
        c.gestureArrived(GestureMessage(device: d.id, event: GestureEvent(time: 8, code: keyF13, gesture: .press, count: 1)))
        c.gestureArrived(GestureMessage(device: DeviceID(rawValue: "x"), event: GestureEvent(time: 8, code: keyF13, gesture: .double, count: 2)))
        #expect(broker.messages.count == n + 2)
    }

    @Test func withKeysHiddenAKeysGestureIsNotPublished() {
        let s = VirtualTimeScheduler()
        let c = core(s)
        let broker = FakeBroker()
        c.brokerConnected(broker)
        c.daemonConnected(FakeDaemon(), keys: .hidden)
        let d = pad()
        c.daemonMessage(.devices([d], tag: nil))
        c.daemonMessage(.state(DeviceStateReport(device: d), tag: nil))
        #expect(broker.messages.filter { $0.topic.hasPrefix("homeassistant/device_automation/") }.count == 6)
        let n = broker.messages.count
        // evflowd sends a hidden key's gesture as KEY_UNKNOWN: nothing matches it.
        c.gestureArrived(GestureMessage(device: d.id, event: GestureEvent(time: 1, code: KeyPrivacy.placeholder, gesture: .single, count: 1)))
        c.gestureArrived(GestureMessage(device: d.id, event: GestureEvent(time: 2, code: btn0, gesture: .single, count: 1)))
        #expect(broker.messages.count == n + 2)
        #expect(broker.payload(layout.gestureTrigger(d.id.rawValue, code: "BTN_0")) == "single")
    }

    @Test func removalClearsTheTriggers() {
        let s = VirtualTimeScheduler()
        let c = core(s)
        let broker = FakeBroker()
        c.brokerConnected(broker)
        c.daemonConnected(FakeDaemon())
        let d = pad()
        c.daemonMessage(.devices([d], tag: nil))
        c.daemonMessage(.state(DeviceStateReport(device: d), tag: nil))
        let topics = Set(broker.messages.filter { $0.topic.hasPrefix("homeassistant/") }.map(\.topic))
        let n = broker.messages.count
        c.daemonMessage(.device(.removed(d)))
        let cleared = broker.messages[n...].filter { $0.payload.isEmpty && $0.retain }.map(\.topic)
        #expect(topics.isSubset(of: Set(cleared)))
    }
}

@Suite(.serialized, .ownLiveResources) struct GestureReloadTests {
    /// Regression: the discovery of a device was republished only when its description changed,
    /// and the description did not hold the gestures, so a reload that changed a pad's gestures
    /// left Home Assistant with the old triggers. The description now carries them.
    @Test func changedGesturesRepublishTheTriggers() {
        let layout = try! TopicLayout(hostname: "h")
        var settings = BridgeSettings(layout: layout)
        settings.discovery = Discovery(counters: false)
        let c = BridgeCore(settings: settings, scheduler: VirtualTimeScheduler(), log: { _ in })
        let broker = FakeBroker()
        c.brokerConnected(broker)
        c.daemonConnected(FakeDaemon())
        var d = pad(kinds: [.single])
        c.daemonMessage(.devices([d], tag: nil))
        c.daemonMessage(.state(DeviceStateReport(device: d), tag: nil))
        #expect(broker.payload(layout.description(d.id.rawValue))?.contains(#""gestures":{"codes":["KEY_A","KEY_F13","BTN_0"],"kinds":["single"]}"#) == true)
        let n = broker.messages.count
        d.gestures = DeviceGestures(codes: [keyF13], kinds: [.single, .long])
        c.daemonMessage(.state(DeviceStateReport(device: d), tag: nil))
        let later = broker.messages[n...]
        let added = later.filter { $0.topic.hasPrefix("homeassistant/device_automation/") && !$0.payload.isEmpty }
        let cleared = later.filter { $0.topic.hasPrefix("homeassistant/device_automation/") && $0.payload.isEmpty }
        #expect(added.count == 2)
        #expect(cleared.count == 2)   // KEY_A single and BTN_0 single
    }
}
