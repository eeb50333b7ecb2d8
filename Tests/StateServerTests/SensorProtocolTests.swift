import Foundation
import InputModel
import ReactiveTesting
import Testing
@testable import EvflowProtocol

// Sensors in the protocol (1.4): what MessageWriter encodes, ServerMessage decodes back to
// the same values; a WATCH with `sensors` reads back as the same request.

private let accel = SensorInfo(id: DeviceID(rawValue: "iio:accel"), name: "accel_3d", sysname: "iio:device0",
                               devnode: "/dev/iio:device0", properties: ["IIO_SENSOR_PROXY_TYPE": "iio-buffer-accel"],
                               channels: [SensorChannel(name: "accel_x", quantity: .accel), SensorChannel(name: "accel_y", quantity: .accel),
                                          SensorChannel(name: "accel_z", quantity: .accel)],
                               buffered: true)
private let light = SensorInfo(id: DeviceID(rawValue: "iio:als"), name: "als", sysname: "iio:device1",
                               channels: [SensorChannel(name: "illuminance", quantity: .illuminance)], buffered: false)

@Suite(.ownLiveResources) struct SensorProtocolTests {
    @Test func sensorMessagesDecodeToWhatWasEncoded() throws {
        var summary = accel
        summary.properties = [:]   // DEVICES carries the summary; STATE the udev properties too
        var w = MessageWriter()
        w.appendDevices([], sensors: [light, accel], tag: .integer(3))
        let report = SensorStateReport(sensor: accel, filtered: SensorSample(time: 200, values: [6.9, 6.8, -0.25]),
                                       raw: SensorSample(time: 210, values: [7.1, 6.5, 0]), orientation: "left-up", live: true,
                                       readErrors: 12, failed: true)
        w.appendSensorState(report, tag: .string("s"))
        w.appendSensorState(SensorStateReport(sensor: light))
        w.appendSample(light, stream: .filtered, sample: SensorSample(time: 81_234_567_890_123, values: [123.4]))
        w.appendSample(accel, stream: .filtered, sample: SensorSample(time: 7, values: [9.8, 0, 0]), orientation: "right-up")
        let watch = WatchRequest(devices: [.deviceClass(.keyboard)], sensors: ["illuminance", "iio:accel"])
        w.appendWatch(watch, matched: [accel.id, light.id], tag: nil)
        w.appendSensorNotice(.added(light))
        w.appendSensorNotice(.removed(light))

        let decoded = try w.bytes.split(separator: UInt8(ascii: "\n")).map { try ServerMessage.decode($0) }
        #expect(decoded == [
            .devices([], sensors: [summary, light], tag: .integer(3)),   // sorted by id
            .sensorState(report, tag: .string("s")),
            .sensorState(SensorStateReport(sensor: light), tag: nil),
            .sample(SampleMessage(device: light.id, time: 81_234_567_890_123, stream: .filtered, values: ["illuminance": 123.4])),
            .sample(SampleMessage(device: accel.id, time: 7, stream: .filtered, values: ["accel_x": 9.8, "accel_y": 0, "accel_z": 0],
                                  orientation: "right-up")),
            .watch(watch, matched: [accel.id, light.id], tag: nil),
            .sensor(.added(light)),
            .sensor(.removed(light)),
        ])
        #expect(decoded[3].messageClass == "SAMPLE")
        #expect(decoded[1].messageClass == "STATE")
    }

    @Test func theWireFormIsAsDocumented() {
        var w = MessageWriter()
        w.appendSample(light, stream: .filtered, sample: SensorSample(time: 5, values: [123.4]))
        w.appendDevices([], sensors: [light])
        #expect(String(decoding: w.bytes, as: UTF8.self) == """
        {"class":"SAMPLE","device":"iio:als","time":5,"stream":"filtered","values":{"illuminance":123.4}}
        {"class":"DEVICES","devices":[],"sensors":[{"id":"iio:als","name":"als","sysname":"iio:device1","reading":"polled","channels":[{"name":"illuminance","quantity":"illuminance","unit":"lx"}]}]}

        """)
    }

    @Test func aValueJSONCannotHoldIsLeftOut() throws {
        var w = MessageWriter()
        w.appendSample(accel, stream: .raw, sample: SensorSample(time: 1, values: [1, .nan, .infinity]))
        guard case .sample(let m) = try ServerMessage.decode(w.bytes.dropLast()) else {
            Issue.record("not a SAMPLE")
            return
        }
        #expect(m.values == ["accel_x": 1])
    }

    @Test func watchSensorsParseAndRoundTrip() throws {
        let request = try Request.parse(#"{"class":"WATCH","sensors":["all","als","all"]}"#)
        guard case .watch(let watch) = request.kind else {
            Issue.record("not a WATCH")
            return
        }
        #expect(watch.sensors == ["all", "als"])
        #expect(watch.selects(light) && watch.selects(accel))
        var w = MessageWriter()
        w.appendRequest(request)
        #expect(try Request.parse(String(decoding: w.bytes.dropLast(), as: UTF8.self)) == request)

        #expect(!WatchRequest().selects(light))   // no `sensors`: no sensor (older clients get no SAMPLE)
        #expect(WatchRequest(sensors: ["illuminance"]).selects(light))
        #expect(!WatchRequest(sensors: ["illuminance"]).selects(accel))
        #expect(WatchRequest(sensors: ["accel_3d"]).selects(accel))
    }

    @Test(arguments: [
        (#"{"class":"WATCH","sensors":"all"}"#, "field 'sensors' must be an array of strings"),
        (#"{"class":"WATCH","sensors":[1]}"#, "field 'sensors' must be an array of strings"),
        (#"{"class":"WATCH","sensors":[""]}"#, "field 'sensors' must not be empty"),
        (#"{"class":"SAMPLE"}"#, "'SAMPLE' is not a request"),
        (#"{"class":"SENSOR"}"#, "'SENSOR' is not a request"),
    ])
    func badSensorRequestsAreRefused(line: String, message: String) {
        let error = #expect(throws: ProtocolError.self) { try Request.parse(line) }
        #expect(error?.message == message)
    }

    @Test func theGreetingSaysOneFour() {
        #expect(ProtocolConstants.protoMinor >= 4)
    }
}
