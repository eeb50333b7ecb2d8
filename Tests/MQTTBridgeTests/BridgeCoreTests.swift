import Foundation
import EvflowProtocol
import InputModel
import Reactive
import ReactiveTesting
import Testing
@testable import MQTTBridge

final class FakeBroker: MessagePublisher {
    var up = true
    var messages: [OutMessage] = []
    func publish(_ m: OutMessage) -> Bool {
        guard up else { return false }
        messages.append(m)
        return true
    }
    func payload(_ topic: String) -> String? {
        messages.last { $0.topic == topic }.map { String(decoding: $0.payload, as: UTF8.self) }
    }
}

final class FakeDaemon: DaemonRequester {
    var requests: [Request] = []
    func send(_ r: Request) -> Bool { requests.append(r); return true }
    var stateRequests: Int { requests.filter { if case .state = $0.kind { return true } else { return false } }.count }
}

private func report(_ d: DeviceInfo, lid: Int32, frames: UInt64) -> DeviceStateReport {
    DeviceStateReport(device: d, switches: [0: lid], counters: DeviceCounters(framesIn: frames))
}

@Suite(.serialized, .ownLiveResources) struct BridgeCoreTests {
    let layout = try! TopicLayout(hostname: "h")
    func core(_ s: VirtualTimeScheduler, discovery: Bool = true, outbox: Int = 10) -> BridgeCore {
        var settings = BridgeSettings(layout: layout)
        settings.discovery = discovery ? Discovery() : nil
        settings.outboxEvents = outbox
        return BridgeCore(settings: settings, scheduler: s, log: { _ in })
    }

    @Test func publishesDescriptionStateDiscoveryAndAvailability() {
        let s = VirtualTimeScheduler()
        let c = core(s)
        let broker = FakeBroker(), daemon = FakeDaemon()
        c.brokerConnected(broker)
        #expect(broker.payload(layout.bridgeAvailability) == "online")
        c.daemonConnected(daemon)
        #expect(daemon.requests.map(\.requestClass) == ["DEVICES", "WATCH"])
        c.daemonMessage(.devices([lid], tag: nil))
        #expect(broker.payload(layout.daemonAvailability) == "online")
        #expect(daemon.stateRequests == 1)
        c.daemonMessage(.state(report(lid, lid: 1, frames: 1), tag: nil))
        #expect(broker.payload(layout.state(lid.id.rawValue))?.contains(#""switches":{"SW_LID":1}"#) == true)
        #expect(broker.payload(layout.description(lid.id.rawValue))?.contains(#""EV_SW":["SW_LID","SW_TABLET_MODE","SW_DOCK"]"#) == true)
        let configs = broker.messages.filter { $0.topic.hasPrefix("homeassistant/") }
        #expect(configs.count == 3 + 4)
        #expect(broker.messages.allSatisfy { $0.retain && $0.qos == 1 || $0.topic == layout.bridgeStats })
        // unchanged state is not published again
        let n = broker.messages.count
        c.daemonMessage(.state(report(lid, lid: 1, frames: 1), tag: nil))
        #expect(broker.messages.count == n)
    }

    @Test func framesAskForStateAtMostOncePerInterval() {
        let s = VirtualTimeScheduler()
        let c = core(s)
        let daemon = FakeDaemon()
        c.brokerConnected(FakeBroker())
        c.daemonConnected(daemon)
        c.daemonMessage(.devices([lid], tag: nil))
        c.daemonMessage(.state(report(lid, lid: 0, frames: 0), tag: nil))
        let before = daemon.stateRequests
        let frame = FrameMessage(device: lid.id, stream: .filtered, frame: InputFrame(time: 1, events: [InputEvent(time: 1, type: 5, code: 0, value: 1)]))
        for _ in 0..<10 { c.daemonMessage(.frame(frame)) }
        #expect(daemon.stateRequests == before + 1)          // leading edge
        s.advance(by: .milliseconds(249))
        #expect(daemon.stateRequests == before + 1)
        s.advance(by: .milliseconds(1))
        #expect(daemon.stateRequests == before + 2)          // one trailing request for the other nine
    }

    @Test func brokerAwayOutboxThenRepublishOnReconnect() {
        let s = VirtualTimeScheduler()
        let c = core(s, discovery: false, outbox: 2)
        let b1 = FakeBroker(), daemon = FakeDaemon()
        c.brokerConnected(b1)
        c.daemonConnected(daemon)
        c.daemonMessage(.devices([lid, keyboard], tag: nil))
        c.daemonMessage(.state(report(lid, lid: 0, frames: 1), tag: nil))
        c.daemonMessage(.state(DeviceStateReport(device: keyboard), tag: nil))
        c.brokerLost()
        let spec = try! EventStreamSpec(parsing: "types=EV_SW")
        for t in 1...5 {
            c.eventFrame(FrameMessage(device: lid.id, stream: .filtered,
                                      frame: InputFrame(time: Int64(t), events: [InputEvent(time: Int64(t), type: 5, code: 0, value: 1)])), spec: spec)
        }
        c.daemonMessage(.state(report(lid, lid: 1, frames: 6), tag: nil))      // state changes while away: kept
        c.daemonMessage(.device(.removed(keyboard)))                           // removal while away: its clears kept
        #expect(c.outbox.droppedEvents == 3)
        let b2 = FakeBroker()
        c.brokerConnected(b2)
        let topics = b2.messages.map(\.topic)
        #expect(b2.payload(layout.bridgeAvailability) == "online")
        #expect(b2.payload(layout.state(lid.id.rawValue))?.contains(#""SW_LID":1"#) == true)
        #expect(b2.payload(layout.state(keyboard.id.rawValue)) == "")          // cleared
        #expect(b2.payload(layout.description(keyboard.id.rawValue)) == "")
        let events = b2.messages.filter { $0.kind == .event }
        #expect(events.map { String(decoding: $0.payload, as: UTF8.self) } == [#"{"time":4,"events":[{"type":"EV_SW","code":"SW_LID","value":1}]}"#,
                                                                               #"{"time":5,"events":[{"type":"EV_SW","code":"SW_LID","value":1}]}"#])
        #expect(topics.lastIndex(of: layout.state(lid.id.rawValue))! < topics.firstIndex(of: layout.events(lid.id.rawValue))!)
        let stats = b2.payload(layout.bridgeStats)!
        #expect(stats.contains(#""outbox_dropped":3"#) && stats.contains(#""broker_connects":2"#))
    }

    /// Regression (found by scripts/check-home-assistant): the state topic was cleared before
    /// the discovery configs, so Home Assistant's entities rendered their templates over an
    /// empty payload and logged an error each.
    @Test func aRemovedDeviceLosesItsDiscoveryConfigsBeforeItsState() {
        let s = VirtualTimeScheduler()
        let c = core(s)
        let broker = FakeBroker(), daemon = FakeDaemon()
        c.brokerConnected(broker)
        c.daemonConnected(daemon)
        c.daemonMessage(.devices([lid], tag: nil))
        c.daemonMessage(.state(report(lid, lid: 0, frames: 1), tag: nil))
        let before = broker.messages.count
        c.daemonMessage(.device(.removed(lid)))
        let clears = broker.messages[before...].map(\.topic)
        let discovery = clears.indices.filter { clears[$0].hasPrefix("homeassistant/") }
        #expect(!discovery.isEmpty)
        #expect(discovery.max()! < clears.firstIndex(of: layout.state(lid.id.rawValue))!)
        #expect(broker.messages[before...].allSatisfy { $0.payload.isEmpty })
    }

    @Test func daemonLostGoesOfflineAndReconcilesOnReturn() {
        let s = VirtualTimeScheduler()
        let c = core(s, discovery: false)
        let broker = FakeBroker()
        c.brokerConnected(broker)
        c.daemonConnected(FakeDaemon())
        c.daemonMessage(.devices([lid, keyboard], tag: nil))
        c.daemonMessage(.state(report(lid, lid: 0, frames: 1), tag: nil))
        c.daemonMessage(.state(DeviceStateReport(device: keyboard), tag: nil))
        c.daemonLost("gone")
        c.daemonLost("still gone")
        #expect(broker.messages.filter { $0.topic == layout.daemonAvailability }.map { String(decoding: $0.payload, as: UTF8.self) }
                == ["offline", "online", "offline"])
        let daemon = FakeDaemon()
        c.daemonConnected(daemon)
        c.daemonMessage(.devices([lid], tag: nil))                              // the keyboard went away meanwhile
        #expect(broker.payload(layout.daemonAvailability) == "online")
        #expect(broker.payload(layout.state(keyboard.id.rawValue)) == "")
        #expect(daemon.stateRequests == 1)
        #expect(c.deviceIDs == [lid.id])
    }
}

@Suite(.serialized, .ownLiveResources) struct ReconnectingTests {
    struct Boom: Error {}

    @Test func backoffGrowsWhileFailingAndRestartsAfterAConnection() {
        run()   // (in a function of its own: a virtual-time timer slot lives as long as its scheduler)
    }

    func run() {
        let s = VirtualTimeScheduler()
        var attempts: [Int64] = []
        var delays: [RxTimeInterval] = []
        var succeedAt: Set<Int> = [3]
        let source = Observable<Int>.deferred {
            attempts.append(s.now)
            let n = attempts.count
            if succeedAt.contains(n) {
                succeedAt.remove(n)
                return Observable<Int>.create { o in
                    o.on(.next(n))
                    let t = s.schedule(after: .seconds(10)) { o.on(.error(Boom())) }
                    return t
                }
            }
            return .error(Boom())
        }
        let sub = reconnecting(source, backoff: ExponentialBackoff(initial: .seconds(1), maxDelay: .seconds(4), maxAttempts: .max),
                               scheduler: s, isConnected: { _ in true }, lost: { _, d in delays.append(d) })
            .subscribe(onNext: { _ in })
        s.advance(by: .seconds(60))
        sub.dispose()
        s.run()
        #expect(delays.prefix(6).map { $0.nanoseconds / 1_000_000_000 } == [1, 2, 1, 2, 4, 4])
        #expect(attempts.prefix(4) == [0, 1_000_000_000, 3_000_000_000, 14_000_000_000])
    }
}

/// Sensors on MQTT (docs/mqtt.md, "Sensors").
@Suite(.serialized, .ownLiveResources) struct BridgeSensorTests {
    let layout = try! TopicLayout(hostname: "h")
    static let light = SensorInfo(id: DeviceID(rawValue: "iio:als"), name: "als", sysname: "iio:device1",
                                  channels: [SensorChannel(name: "illuminance", quantity: .illuminance)], buffered: false)
    static let env = SensorInfo(id: DeviceID(rawValue: "iio:bme280"), name: "bme280", sysname: "iio:device2",
                                channels: [SensorChannel(name: "temp", quantity: .temp), SensorChannel(name: "pressure", quantity: .pressure),
                                           SensorChannel(name: "humidityrelative", quantity: .humidityrelative)],
                                buffered: false)

    func core(_ s: VirtualTimeScheduler, sensors: Bool = true) -> BridgeCore {
        var settings = BridgeSettings(layout: layout)
        settings.discovery = Discovery()
        settings.sensors = sensors
        return BridgeCore(settings: settings, scheduler: s, log: { _ in })
    }

    func sample(_ s: SensorInfo, _ t: Int64, _ values: [String: Double]) -> ServerMessage {
        .sample(SampleMessage(device: s.id, time: t, stream: .filtered, values: values))
    }

    @Test func theWatchAsksForSensorsUnlessTurnedOff() {
        let s = VirtualTimeScheduler()
        for on in [true, false] {
            let daemon = FakeDaemon()
            core(s, sensors: on).daemonConnected(daemon)
            guard case .watch(let w) = daemon.requests.last?.kind else {
                Issue.record("no WATCH")
                continue
            }
            #expect(w.sensors == (on ? ["all"] : []))
        }
    }

    @Test func homeAssistantSensorsHaveTheirDeviceClassAndUnit() throws {
        let s = VirtualTimeScheduler()
        let c = core(s)
        let broker = FakeBroker()
        c.brokerConnected(broker)
        c.daemonConnected(FakeDaemon())
        c.daemonMessage(.devices([], sensors: [Self.light, Self.env], tag: nil))
        func config(_ sensor: SensorInfo, _ channel: String) throws -> [String: Any] {
            let topic = layout.discovery(component: "sensor", object: "\(TopicLayout.objectID(sensor.id.rawValue))_\(channel)")
            let text = try #require(broker.payload(topic))
            return try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        }
        for (sensor, channel, cls, unit) in [(Self.light, "illuminance", "illuminance", "lx"), (Self.env, "temp", "temperature", "°C"),
                                             (Self.env, "pressure", "pressure", "kPa"), (Self.env, "humidityrelative", "humidity", "%")] {
            let c = try config(sensor, channel)
            #expect(c["device_class"] as? String == cls)
            #expect(c["unit_of_measurement"] as? String == unit)
            #expect(c["state_class"] as? String == "measurement")
            #expect(c["state_topic"] as? String == layout.sensorState(sensor.id.rawValue))
            #expect(c["value_template"] as? String == "{{ value_json['values']['\(channel)'] }}")
        }
        #expect(broker.payload(layout.sensorDescription(Self.light.id.rawValue))?.contains(#""unit":"lx""#) == true)
    }

    @Test func samplesBecomeAStateDocumentAtMostOncePerInterval() {
        let s = VirtualTimeScheduler()
        let c = core(s)
        let broker = FakeBroker()
        c.brokerConnected(broker)
        c.daemonConnected(FakeDaemon())
        c.daemonMessage(.devices([], sensors: [Self.light], tag: nil))
        let topic = layout.sensorState(Self.light.id.rawValue)
        c.daemonMessage(sample(Self.light, 1, ["illuminance": 120.5]))
        #expect(broker.payload(topic) == #"{"sensor":"iio:als","time":1,"values":{"illuminance":120.5}}"#)
        c.daemonMessage(sample(Self.light, 2, ["illuminance": 130]))
        c.daemonMessage(sample(Self.light, 3, ["illuminance": 140.25]))
        #expect(broker.messages.filter { $0.topic == topic }.count == 1)   // held to the interval's end
        s.advance(by: .milliseconds(250))
        #expect(broker.messages.filter { $0.topic == topic }.count == 2)
        #expect(broker.payload(topic) == #"{"sensor":"iio:als","time":3,"values":{"illuminance":140.25}}"#)   // the latest
        #expect(broker.messages.filter { $0.topic == topic }.allSatisfy { $0.retain })
    }

    @Test func anAccelerometersOrientationIsAnEnumSensor() throws {
        let accel = SensorInfo(id: DeviceID(rawValue: "iio:accel"), name: "accel_3d", sysname: "iio:device0",
                               channels: ["accel_x", "accel_y", "accel_z"].map { SensorChannel(name: $0, quantity: .accel) },
                               buffered: true)
        let s = VirtualTimeScheduler()
        let c = core(s)
        let broker = FakeBroker()
        c.brokerConnected(broker)
        c.daemonConnected(FakeDaemon())
        c.daemonMessage(.devices([], sensors: [accel], tag: nil))
        let text = try #require(broker.payload(layout.discovery(component: "sensor", object: "iio_accel_orientation")))
        let config = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(config["device_class"] as? String == "enum")
        #expect(config["options"] as? [String] == ["undefined", "normal", "bottom-up", "left-up", "right-up", "face-up", "face-down"])
        #expect(config["unit_of_measurement"] == nil)
        c.daemonMessage(.sample(SampleMessage(device: accel.id, time: 5, stream: .filtered,
                                              values: ["accel_x": 9.8, "accel_y": 0.25, "accel_z": 0], orientation: "right-up")))
        #expect(broker.payload(layout.sensorState(accel.id.rawValue))
                == #"{"sensor":"iio:accel","time":5,"values":{"accel_x":9.8,"accel_y":0.25,"accel_z":0},"orientation":"right-up"}"#)
    }

    @Test func aSensorGoneFromDevicesIsClearedAndAnUnknownOneAsksForTheList() {
        let s = VirtualTimeScheduler()
        let c = core(s)
        let broker = FakeBroker(), daemon = FakeDaemon()
        c.brokerConnected(broker)
        c.daemonConnected(daemon)
        c.daemonMessage(.devices([], sensors: [Self.light], tag: nil))
        c.daemonMessage(sample(Self.light, 1, ["illuminance": 5]))
        let asked = daemon.requests.count
        c.daemonMessage(sample(Self.env, 1, ["temp": 21.5]))   // not listed yet
        #expect(daemon.requests.count == asked + 1)
        #expect(daemon.requests.last?.requestClass == "DEVICES")
        c.daemonMessage(.devices([], sensors: [Self.light, Self.env], tag: nil))
        c.daemonMessage(.sensor(.removed(Self.light)))   // evflowd's notice
        #expect(broker.payload(layout.sensorState(Self.light.id.rawValue)) == "")   // cleared (retained, empty)
        #expect(broker.payload(layout.sensorDescription(Self.light.id.rawValue)) == "")
        #expect(broker.payload(layout.sensorDescription(Self.env.id.rawValue))?.contains("bme280") == true)
        let topics = broker.messages.map(\.topic)
        let lastDiscovery = topics.lastIndex { $0.hasPrefix("homeassistant/") && $0.contains("als") }!
        #expect(lastDiscovery < topics.lastIndex(of: layout.sensorState(Self.light.id.rawValue))!)
    }
}
