import DeviceStreams
import Foundation
import InputModel
import Pipeline
import Reactive
import ReactiveTesting
import Recording
import Testing
@testable import StateServer

// A sensor recording replayed through the hub, on the socket: DEVICES lists the sensor with
// its units, WATCH streams its SAMPLEs (and is what makes it read), STATE gives its values.

/// A hub whose sensors replay a sensor recording on a virtual clock advanced by the test.
final class ReplaySensors: @unchecked Sendable {
    let scheduler = VirtualTimeScheduler()
    let hub: DeviceHub
    private var subscription: Disposable?

    init(_ recordings: [SensorRecording]) {
        hub = DeviceHub(store: StateStore(), config: FilterConfig(), scheduler: scheduler, latencyClock: .replay)
        let replay = SensorReplaySource(recordings: recordings, scheduler: scheduler, removeAtEnd: false)
        subscription = hub.sensors.run(replay.sensors)
        scheduler.advance(by: .zero)   // the sensors are announced at time 0
    }

    func stop() {
        subscription?.dispose()
        subscription = nil
        scheduler.advance(by: .zero)
    }
}

/// A hub whose sensors the test plugs, feeds and removes (synchronously, on a virtual clock).
final class ManualSensors: @unchecked Sendable {
    let scheduler = VirtualTimeScheduler()
    let hub: DeviceHub
    let sensors = PublishSubject<SensorStream>()
    let samples = PublishSubject<SensorSample>()
    let removal = PublishSubject<Never>()
    private var subscription: Disposable?

    init() {
        hub = DeviceHub(store: StateStore(), config: FilterConfig(), scheduler: scheduler, latencyClock: .replay)
        subscription = hub.sensors.run(sensors.asObservable())
        scheduler.advance(by: .zero)
    }

    func plug(_ info: SensorInfo) {
        sensors.onNext(SensorStream(info: info, samples: samples.asObservable(), removal: removal.asObservable()))
    }

    func stop() {
        subscription?.dispose()
        subscription = nil
        scheduler.advance(by: .zero)
    }
}

@Suite(.serialized, .ownLiveResources)
struct SensorServerTests {
    @Test func aSensorThatComesAndGoesWhileWatchedIsAnnounced() async throws {
        let sensors = ManualSensors()
        let (server, path) = try await startServer(hub: sensors.hub)
        do {
            let c = try TestClient(path: path)
            _ = try c.read()
            #expect(try c.request(#"{"class":"WATCH","sensors":["all"]}"#)["matched"] as? [String] == [])
            let light = SensorInfo(id: DeviceID(rawValue: "iio-light"), name: "als", sysname: "iio:device1",
                                   channels: [SensorChannel(name: "illuminance", quantity: .illuminance)], buffered: false)
            sensors.scheduler.schedule { sensors.plug(light) }   // the source delivers on the hub's scheduler
            sensors.scheduler.advance(by: .zero)
            let added = try c.read()
            #expect(added["class"] as? String == "SENSOR")
            #expect(added["action"] as? String == "added")
            #expect((added["sensor"] as? [String: Any])?["id"] as? String == "iio-light")
            sensors.scheduler.advance(by: .zero)   // the watch's connection to the new sensor
            sensors.scheduler.schedule { sensors.samples.onNext(SensorSample(time: 7, values: [42.5])) }
            sensors.scheduler.advance(by: .zero)
            let sample = try c.read()
            #expect(sample["class"] as? String == "SAMPLE")
            #expect((sample["values"] as? [String: Double])?["illuminance"] == 42.5)
            sensors.scheduler.schedule {
                sensors.samples.onCompleted()
                sensors.removal.onCompleted()
            }
            sensors.scheduler.advance(by: .zero)
            let removed = try c.read()
            #expect(removed["class"] as? String == "SENSOR")
            #expect(removed["action"] as? String == "removed")
            #expect(try c.request(#"{"class":"DEVICES"}"#)["sensors"] == nil)
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        sensors.stop()
    }

    static let ms: Int64 = 1_000_000

    @Test func aReplayedLightSensorOnTheSocket() async throws {
        let recording = try SensorRecording.read(path: ServerFixtures.root.appendingPathComponent("sensors/als-phantom-zero.sensors").path)
        let sensors = ReplaySensors([recording])
        let (server, path) = try await startServer(hub: sensors.hub)
        do {
            let c = try TestClient(path: path)
            #expect(try c.read()["proto_minor"] as? Int == 8)

            let list = try c.request(#"{"class":"DEVICES"}"#)
            let entries = try #require(list["sensors"] as? [[String: Any]])
            #expect(entries.count == 1)
            #expect(entries.first?["id"] as? String == "iio:0000:0000-als00001")
            #expect(entries.first?["reading"] as? String == "polled")
            let channel = try #require((entries.first?["channels"] as? [[String: Any]])?.first)
            #expect(channel["name"] as? String == "illuminance")
            #expect(channel["unit"] as? String == "lx")

            // Nobody reads it yet: STATE says so and has no value.
            let idle = try c.request(#"{"class":"STATE","device":"als"}"#)
            #expect(idle["live"] as? Bool == false)
            #expect(idle["values"] == nil)

            let watch = try c.request(#"{"class":"WATCH","sensors":["illuminance"]}"#)
            #expect(watch["sensors"] as? [String] == ["illuminance"])
            #expect(watch["matched"] as? [String] == ["iio:0000:0000-als00001"])
            sensors.scheduler.advance(by: .zero)   // the watch's connection is made on the hub's scheduler
            sensors.scheduler.advance(to: 250 * Self.ms)
            var samples: [[String: Any]] = []
            for _ in 0..<2 { samples.append(try c.read()) }
            #expect(samples.map { $0["class"] as? String } == ["SAMPLE", "SAMPLE"])
            #expect(samples.map { $0["time"] as? Int } == [100_000_000, 200_000_000])
            #expect(samples.map { ($0["values"] as? [String: Double])?["illuminance"] } == [117.8, 117.1])
            #expect(samples.allSatisfy { $0["stream"] as? String == "filtered" && $0["device"] as? String == "iio:0000:0000-als00001" })

            let live = try c.request(#"{"class":"STATE","device":"iio:0000:0000-als00001","id":1}"#)
            #expect(live["live"] as? Bool == true)
            #expect(live["time"] as? Int == 200_000_000)
            #expect((live["values"] as? [String: Double])?["illuminance"] == 117.1)
            #expect((live["raw"] as? [String: Double])?["illuminance"] == 117.1)
            #expect((live["sensor"] as? [String: Any])?["sysname"] as? String == "iio:device1")
            #expect(live["id"] as? Int == 1)
            #expect(live["read_errors"] as? Int == 0 && live["failed"] as? Bool == false)

            // Metrics per channel: the last values in their unit, the samples counted.
            // (METRICS takes the frame ages on the hub's scheduler: run it until the answer comes.)
            try c.send(#"{"class":"METRICS"}"#)
            var reply: [String: Any]?
            for _ in 0..<100 where reply == nil {
                sensors.scheduler.advance(by: .zero)
                reply = try? c.read(timeout: 0.05)
            }
            let metrics = try #require(reply?["text"] as? String)
            let labels = #"name="als",sensor="iio:0000:0000-als00001""#
            let series = #"channel="illuminance",name="als",quantity="illuminance",sensor="iio:0000:0000-als00001",unit="lx""#
            for line in ["evflow_sensor_value{\(series)} 117.1", "evflow_sensor_raw_value{\(series)} 117.1",
                         "evflow_sensor_samples_in_total{\(labels)} 2", "evflow_sensor_samples_out_total{\(labels)} 2",
                         "evflow_sensor_read{\(labels)} 1.0", "evflow_sensor_failed{\(labels)} 0.0",
                         "evflow_sensor_read_errors_total{\(labels)} 0"] {
                #expect(metrics.split(separator: "\n").contains(Substring(line)), "\(line) not in:\n\(metrics)")
            }

            #expect(try c.request(#"{"class":"UNWATCH"}"#)["class"] as? String == "UNWATCH")
            sensors.scheduler.advance(by: .zero)   // the last consumer gone: the sensor is no longer read
            let after = try c.request(#"{"class":"STATE","device":"als"}"#)
            #expect(after["live"] as? Bool == false)
            #expect((after["values"] as? [String: Double])?["illuminance"] == 117.1)   // the last value seen

            // A name that is neither a device nor a sensor.
            let unknown = try c.request(#"{"class":"STATE","device":"nothing"}"#)
            #expect(unknown["class"] as? String == "ERROR")
            #expect(unknown["field"] as? String == "device")
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        sensors.stop()
    }

    @Test func aWatchWithoutSensorsGetsNoSamples() async throws {
        let recording = try SensorRecording.read(path: ServerFixtures.root.appendingPathComponent("sensors/als-phantom-zero.sensors").path)
        let sensors = ReplaySensors([recording])
        let (server, path) = try await startServer(hub: sensors.hub)
        do {
            let c = try TestClient(path: path)
            _ = try c.read()
            let watch = try c.request(#"{"class":"WATCH"}"#)
            #expect(watch["matched"] as? [String] == [])
            sensors.scheduler.advance(by: .zero)
            sensors.scheduler.advance(to: 500 * Self.ms)
            // The next line is the PING's answer: no SAMPLE came before it.
            #expect(try c.request(#"{"class":"PING"}"#)["class"] as? String == "PING")
            let state = try c.request(#"{"class":"STATE","device":"als"}"#)
            #expect(state["live"] as? Bool == false)   // and the sensor was never read
            #expect(state["values"] == nil)
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        sensors.stop()
    }
}
