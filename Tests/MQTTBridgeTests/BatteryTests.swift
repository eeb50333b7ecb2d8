import Foundation
import EvflowProtocol
import InputModel
import Reactive
import ReactiveTesting
import Testing
@testable import MQTTBridge

// A device's battery on MQTT (docs/mqtt.md, "Battery"): a retained document per device, and
// with discovery a diagnostic battery sensor on the device's Home Assistant device, published
// with its other entities, updated by BATTERY, cleared with the device.

/// A Bluetooth pad with a key, and the battery hid-input would name for its address.
private func btPad(_ battery: DeviceBattery? = DeviceBattery(percent: 87, status: .discharging, supply: "hid-aa:bb:cc:dd:ee:ff-battery")) -> DeviceInfo {
    var d = DeviceInfo(name: "BT Pad", inputID: InputID(bustype: 5, vendor: 0x1234, product: 0xabcd, version: 1),
                       uniq: "aa:bb:cc:dd:ee:ff", classes: [.key], capabilities: [EventType.key: [0x100]])
    d.battery = battery
    return d
}

private func object(_ text: String) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
}

@Suite(.ownLiveResources) struct BatteryDiscoveryTests {
    let layout = try! TopicLayout(hostname: "h")

    @Test func aPercentageIsADiagnosticBatterySensorOnTheDevicesHADevice() throws {
        let d = btPad()
        let dev = TopicLayout.objectID(d.id.rawValue)
        let entities = Discovery(counters: false).entities(for: d, layout: layout)
        #expect(entities.map(\.component) == ["sensor"])
        let e = try #require(entities.first)
        #expect(layout.discovery(component: e.component, object: e.objectID) == "homeassistant/sensor/evflow_h/\(dev)_battery/config")
        let topic = "evflow/h/devices/\(d.id.rawValue)/battery"
        #expect(e.config.text == #"{"name":"Battery","unique_id":"evflow_h_\#(dev)_battery","object_id":"evflow_h_\#(dev)_battery","state_topic":"\#(topic)","value_template":"{{ value_json.percent }}","device_class":"battery","unit_of_measurement":"%","state_class":"measurement","json_attributes_topic":"\#(topic)","entity_category":"diagnostic","availability":[{"topic":"evflow/h/bridge/availability"},{"topic":"evflow/h/evflowd/availability"}],"availability_mode":"all","device":{"identifiers":["evflow_h_\#(dev)"],"name":"BT Pad (h)","manufacturer":"evflow","model":"1234:abcd BT Pad"}}"#)
        // The same HA device as the device's other entities (here a counter sensor's).
        let counter = try #require(Discovery().entities(for: d, layout: layout).first { $0.objectID.hasSuffix("_events_in") })
        #expect(try object(counter.config.text)["device"] as? NSDictionary == object(e.config.text)["device"] as? NSDictionary)
    }

    @Test func aLevelOnlyBatteryIsAnEnumSensorWithoutANumber() throws {
        let d = btPad(DeviceBattery(level: .low, status: .unknown, supply: "wacom_battery_0"))
        let e = try #require(Discovery(counters: false).entities(for: d, layout: layout).first)
        #expect(e.objectID == "\(TopicLayout.objectID(d.id.rawValue))_battery_level")
        let c = try object(e.config.text)
        #expect(c["name"] as? String == "Battery level")
        #expect(c["device_class"] as? String == "enum")
        #expect(c["options"] as? [String] == ["critical", "low", "normal", "high", "full", "unknown"])
        #expect(c["value_template"] as? String == "{{ value_json.level }}")
        #expect(c["unit_of_measurement"] == nil && c["state_class"] == nil)
        #expect(c["entity_category"] as? String == "diagnostic")
    }

    @Test func noBatteryNoSensor() {
        #expect(Discovery(counters: false).entities(for: btPad(nil), layout: layout).isEmpty)
    }

    /// Identity (docs/mqtt.md, "Identity"): the unique_id comes from evflowd's device id, which
    /// a Bluetooth device keeps across sleep and re-pairing (same name, uniq, phys, version) —
    /// not from the power supply, whose reading changes.
    @Test func theUniqueIDFollowsTheDeviceIDNotTheReading() throws {
        let a = btPad(DeviceBattery(percent: 90, status: .charging, supply: "hid-aa:bb:cc:dd:ee:ff-battery"))
        let b = btPad(DeviceBattery(percent: 12, status: .discharging, supply: "hid-aa:bb:cc:dd:ee:ff-battery"))
        func uniqueID(_ d: DeviceInfo) throws -> String? {
            try object(try #require(Discovery(counters: false).entities(for: d, layout: layout).first).config.text)["unique_id"] as? String
        }
        #expect(try uniqueID(a) == uniqueID(b))
        #expect(try uniqueID(a) == "evflow_h_\(TopicLayout.objectID(a.id.rawValue))_battery")
    }

    @Test func theDocumentIsTheProtocolsBatteryMember() {
        #expect(Documents.battery(DeviceBattery(percent: 73, status: .notCharging, supply: "hid-x-battery")).text
                == #"{"percent":73,"status":"not-charging","supply":"hid-x-battery"}"#)
        #expect(Documents.battery(DeviceBattery(level: .critical, status: .discharging, supply: "s")).text
                == #"{"level":"critical","status":"discharging","supply":"s"}"#)
    }
}

@Suite(.serialized, .ownLiveResources) struct BridgeBatteryTests {
    let layout = try! TopicLayout(hostname: "h")

    func connected(_ s: VirtualTimeScheduler, discovery: Bool = true) -> (BridgeCore, FakeBroker) {
        var settings = BridgeSettings(layout: layout)
        settings.discovery = discovery ? Discovery(counters: false) : nil
        let c = BridgeCore(settings: settings, scheduler: s, log: { _ in })
        let broker = FakeBroker()
        c.brokerConnected(broker)
        c.daemonConnected(FakeDaemon())
        return (c, broker)
    }

    func battery(_ d: DeviceInfo, _ b: DeviceBattery) -> ServerMessage {
        .battery(BatteryMessage(device: d.id, battery: b))
    }

    var sensorTopic: (DeviceInfo) -> String {
        { layout.discovery(component: "sensor", object: TopicLayout.objectID($0.id.rawValue) + "_battery") }
    }

    @Test func publishedAtDiscoveryTimeThenOnEachChangeOnly() {
        let s = VirtualTimeScheduler()
        let (c, broker) = connected(s)
        let d = btPad()
        c.daemonMessage(.devices([d], tag: nil))
        c.daemonMessage(.state(DeviceStateReport(device: d), tag: nil))
        let topic = layout.battery(d.id.rawValue)
        #expect(broker.payload(topic) == #"{"percent":87,"status":"discharging","supply":"hid-aa:bb:cc:dd:ee:ff-battery"}"#)
        #expect(broker.messages.last { $0.topic == topic }?.retain == true)
        let topics = broker.messages.map(\.topic)
        #expect(topics.firstIndex(of: sensorTopic(d))! < topics.firstIndex(of: topic)!)   // the entity, then its value
        let n = broker.messages.count
        c.daemonMessage(battery(d, DeviceBattery(percent: 86, status: .discharging, supply: "hid-aa:bb:cc:dd:ee:ff-battery")))
        #expect(broker.messages.count == n + 1)                                              // the document only, no discovery
        #expect(broker.payload(topic) == #"{"percent":86,"status":"discharging","supply":"hid-aa:bb:cc:dd:ee:ff-battery"}"#)
        c.daemonMessage(battery(d, DeviceBattery(percent: 86, status: .charging, supply: "hid-aa:bb:cc:dd:ee:ff-battery")))
        #expect(broker.payload(topic)?.contains(#""status":"charging""#) == true)
        // The periodic STATE carries the same reading: nothing new.
        var now = d
        now.battery = DeviceBattery(percent: 86, status: .charging, supply: "hid-aa:bb:cc:dd:ee:ff-battery")
        let m = broker.messages.count
        c.daemonMessage(.state(DeviceStateReport(device: now), tag: nil))
        #expect(broker.messages.count == m)
    }

    @Test func withoutDiscoveryTheDocumentIsStillPublished() {
        let s = VirtualTimeScheduler()
        let (c, broker) = connected(s, discovery: false)
        let d = btPad()
        c.daemonMessage(.state(DeviceStateReport(device: d), tag: nil))
        #expect(broker.payload(layout.battery(d.id.rawValue))?.contains(#""percent":87"#) == true)
        #expect(!broker.messages.contains { $0.topic.hasPrefix("homeassistant/") })
    }

    @Test func aFirstReadingAfterTheDeviceWasDescribedAddsTheSensor() {
        let s = VirtualTimeScheduler()
        let (c, broker) = connected(s)
        let d = btPad(nil)
        c.daemonMessage(.state(DeviceStateReport(device: d), tag: nil))
        #expect(broker.payload(sensorTopic(d)) == nil)
        c.daemonMessage(battery(d, DeviceBattery(percent: 50, status: .discharging, supply: "hid-aa:bb:cc:dd:ee:ff-battery")))
        #expect(broker.payload(sensorTopic(d))?.contains(#""device_class":"battery""#) == true)
        #expect(broker.payload(layout.battery(d.id.rawValue))?.contains(#""percent":50"#) == true)
    }

    @Test func aBatteryOfAnUndescribedDeviceWaitsForItsState() {
        let s = VirtualTimeScheduler()
        let (c, broker) = connected(s)
        let d = btPad()
        c.daemonMessage(battery(d, DeviceBattery(percent: 50, status: .discharging, supply: "hid-aa:bb:cc:dd:ee:ff-battery")))
        #expect(!broker.messages.contains { $0.topic == layout.battery(d.id.rawValue) })
    }

    @Test func aReadingTurningIntoALevelReplacesTheEntityBeforeTheDocument() {
        let s = VirtualTimeScheduler()
        let (c, broker) = connected(s)
        let d = btPad()
        c.daemonMessage(.state(DeviceStateReport(device: d), tag: nil))
        let before = broker.messages.count
        c.daemonMessage(battery(d, DeviceBattery(level: .low, status: .discharging, supply: "hid-aa:bb:cc:dd:ee:ff-battery")))
        let level = layout.discovery(component: "sensor", object: TopicLayout.objectID(d.id.rawValue) + "_battery_level")
        let after = broker.messages[before...].map(\.topic)
        #expect(after == [sensorTopic(d), level, layout.battery(d.id.rawValue)])
        #expect(broker.payload(sensorTopic(d)) == "")
        #expect(broker.payload(layout.battery(d.id.rawValue)) == #"{"level":"low","status":"discharging","supply":"hid-aa:bb:cc:dd:ee:ff-battery"}"#)
    }

    @Test func aBatteryGoneFromTheSummaryLosesItsEntityThenItsDocument() {
        let s = VirtualTimeScheduler()
        let (c, broker) = connected(s)
        let d = btPad()
        c.daemonMessage(.state(DeviceStateReport(device: d), tag: nil))
        let before = broker.messages.count
        c.daemonMessage(.state(DeviceStateReport(device: btPad(nil)), tag: nil))
        #expect(broker.messages[before...].map(\.topic) == [sensorTopic(d), layout.battery(d.id.rawValue)])
        #expect(broker.messages[before...].allSatisfy { $0.payload.isEmpty && $0.retain })
    }

    @Test func removedWithTheDeviceDiscoveryFirst() {
        let s = VirtualTimeScheduler()
        let (c, broker) = connected(s)
        let d = btPad()
        c.daemonMessage(.state(DeviceStateReport(device: d), tag: nil))
        let before = broker.messages.count
        c.daemonMessage(.device(.removed(d)))
        let clears = broker.messages[before...].map(\.topic)
        #expect(clears.firstIndex(of: sensorTopic(d))! < clears.firstIndex(of: layout.battery(d.id.rawValue))!)
        #expect(clears.firstIndex(of: layout.battery(d.id.rawValue))! < clears.firstIndex(of: layout.state(d.id.rawValue))!)
        #expect(broker.messages[before...].allSatisfy { $0.payload.isEmpty })
        c.daemonMessage(battery(d, DeviceBattery(percent: 1, status: .discharging, supply: "hid-aa:bb:cc:dd:ee:ff-battery")))
        #expect(broker.payload(layout.battery(d.id.rawValue)) == "")   // none after the removal
    }

    @Test func republishedOnABrokerReconnect() {
        let s = VirtualTimeScheduler()
        let (c, _) = connected(s)
        let d = btPad()
        c.daemonMessage(.state(DeviceStateReport(device: d), tag: nil))
        c.brokerLost()
        let again = FakeBroker()
        c.brokerConnected(again)
        #expect(again.payload(layout.battery(d.id.rawValue))?.contains(#""percent":87"#) == true)
        #expect(again.payload(sensorTopic(d))?.contains(#""device_class":"battery""#) == true)
    }
}
