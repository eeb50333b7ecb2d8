import Foundation
import InputModel
import Reactive
import ReactiveTesting
import Testing
@testable import Recording

/// The sensor recording format (docs/formats/sensors.md) and its replay.
@Suite("Sensor recordings", .ownLiveResources)
struct SensorRecordingTests {
    static let ms: Int64 = 1_000_000

    static func parse(_ text: String) throws(RecordingError) -> SensorRecording {
        try SensorRecording.parse(Array(text.utf8), file: "t.sensors")
    }

    @Test func theLightFixtureReadsWithItsTimesFromTheFirstSample() throws {
        let r = try SensorRecording.read(path: Fixtures.url("sensors/als-phantom-zero.sensors").path)
        #expect(r.sensors == [SensorInfo(id: DeviceID(rawValue: "iio:0000:0000-als00001"), name: "als", sysname: "iio:device1",
                                         channels: [SensorChannel(name: "illuminance", quantity: .illuminance)], buffered: false)])
        #expect(r.entries.count == 50)
        #expect(r.entries[0].sample.time == 0)
        #expect(r.entries[20].sample == SensorSample(time: 2000 * Self.ms, values: [0]))
    }

    @Test func whatIsWrittenReadsBackEqual() throws {
        let r = try SensorRecording.read(path: Fixtures.url("sensors/accel-tilt-45.sensors").path)
        #expect(r.sensors[0].channels.map(\.name) == ["accel_x", "accel_y", "accel_z"])
        #expect(r.sensors[0].buffered)
        #expect(try Self.parse(r.written()) == r)
    }

    /// CI's fuzz finding: fields were cut at Characters, and "\r\n" is one Character, so an id
    /// read as "id\r" (from "id\r\t") was written as "id\r\n" and joined the next line. Lines
    /// and fields are now cut at bytes, "\r" among the blanks; a combining mark after a tab
    /// stays in its field.
    @Test func namesAroundCarriageReturnsAndCombiningMarksReadBackEqual() throws {
        let withCR = try Self.parse("# EVFLOW SENSORS 1\nS: h iio:device0\r buffered id\r\t\nN: name\r\t\nC: x illuminance\r\nV: 0.000000 h 1\n")
        #expect(withCR.sensors.map(\.id.rawValue) == ["id"])
        #expect(withCR.sensors.map(\.name) == ["name"])
        #expect(withCR.sensors.map(\.sysname) == ["iio:device0"])
        #expect(try Self.parse(withCR.written()) == withCR)
        let combining = try Self.parse("# EVFLOW SENSORS 1\nS:\th\tsys\tpolled\t\u{301}a\nN: \u{301}b c\nC:\tx\tilluminance\nV: 0.000000 h 1\n")
        #expect(combining.sensors.map(\.id.rawValue) == ["\u{301}a"])
        #expect(combining.sensors.map(\.name) == ["\u{301}b c"])
        let again = try Self.parse(combining.written())
        #expect(again.sensors.map(\.id.rawValue.unicodeScalars.count) == [2])
        #expect(again == combining)
    }

    @Test(arguments: [
        ("# EVFLOW SESSION 1\n", 1, "bad session: the first line must be '# EVFLOW SENSORS 1'"),
        ("# EVFLOW SENSORS 1\n", 1, "no events: the recording describes no sensor (no S: line)"),
        ("# EVFLOW SENSORS 1\nS: a iio:device0 polled\nC: illuminance illuminance\nV: 1.000000 a\n", 4,
         "truncated line: expected a value for illuminance"),
        ("# EVFLOW SENSORS 1\nS: a iio:device0 polled\nC: illuminance illuminance\nV: 1.000000 a 3 4\n", 4,
         "unexpected text '4' after the last field"),
        ("# EVFLOW SENSORS 1\nS: a iio:device0 polled\nC: illuminance illuminance\nV: 1.000000 a lots\n", 4,
         "bad number 'lots' for illuminance"),
        ("# EVFLOW SENSORS 1\nS: a iio:device0 polled\nC: illuminance illuminance\nV: 1.5 a 3\n", 4,
         "bad number '1.5' for time"),
        ("# EVFLOW SENSORS 1\nS: a iio:device0 polled\nC: illuminance illuminance\nV: 2.000000 a 3\nV: 1.000000 a 3\n", 5,
         "time goes backwards: 1.000000 after 2.000000"),
        ("# EVFLOW SENSORS 1\nS: a iio:device0 polled\nC: illuminance illuminance\nV: 1.000000 b 3\n", 4,
         "bad session: unknown sensor 'b' (no S: b line)"),
        ("# EVFLOW SENSORS 1\nS: a iio:device0 polled\nC: lux illuminance\nC: x brightness\n", 4,
         "bad session: unknown quantity 'brightness'"),
        ("# EVFLOW SENSORS 1\nS: a iio:device0 sometimes\n", 2,
         "bad session: reading must be 'buffered' or 'polled', not 'sometimes'"),
        ("# EVFLOW SENSORS 1\n\nS: a iio:device0 polled\nN: light\n", 3,
         "missing device description: sensor 'light' has no C: channel line"),
        ("# EVFLOW SENSORS 1\nS: a iio:device0 polled\nC: l illuminance\nV: 1.000000 a 3\nC: m illuminance\n", 5,
         "misplaced line: C: line outside a sensor block"),
        ("# EVFLOW SENSORS 1\nX: 1\n", 2, "unknown line prefix 'X:'"),
        // Issue #34: a duplicate channel name was accepted, and SAMPLE, STATE and MQTT then
        // held `"values":{"x":1,"x":999}`.
        ("# EVFLOW SENSORS 1\nS: a iio:device0 buffered\nN: accel\nC: x accel\nC: y accel\nC: x accel\n", 6,
         "bad session: second channel named 'x' in sensor 'accel'"),
        // Issue #34: a recording spanning 10¹⁰ s trapped in `(micros - origin) * 1000`.
        ("# EVFLOW SENSORS 1\nS: a iio:device0 polled\nC: l illuminance\nV: 0.000000 a 1\nV: 10000000000.000000 a 2\n", 5,
         "bad number '10000000000.000000' for timestamp (at most 2305843009.213693 s, about 73 years, after the first)"),
        ("# EVFLOW SENSORS 1\nS: a iio:device0 polled\nC: l illuminance\nV: 5.000000 a 1\nV: 2305843014.213694 a 2\n", 5,
         "bad number '2305843014.213694' for timestamp (at most 2305843009.213693 s, about 73 years, after the first)"),
    ])
    func aMalformedFileNamesItsLine(text: String, line: Int, message: String) {
        let error = #expect(throws: RecordingError.self) { try Self.parse(text) }
        #expect(error?.description == "t.sensors:\(line): \(message)")
    }

    @Test func theRecorderKeepsDescribedSensorsInOrderAndReadsBack() throws {
        let light = SensorInfo(id: DeviceID(rawValue: "iio:als"), name: "ambient light", sysname: "iio:device1",
                               channels: [SensorChannel(name: "illuminance", quantity: .illuminance)], buffered: false)
        var recorder = SensorRecorder(sensors: [light])
        recorder.sample(of: light.id, time: 5_000_000_000, values: ["illuminance": 120.5])
        recorder.sample(of: DeviceID(rawValue: "iio:other"), time: 5_010_000_000, values: ["x": 1])
        recorder.sample(of: light.id, time: 4_990_000_000, values: ["illuminance": 0])   // went back: kept at 5 s
        recorder.sample(of: light.id, time: 5_100_000_000, values: ["illuminance": 121])
        #expect(recorder.unknownSamples == 1)
        let read = try Self.parse(recorder.recording.written())
        #expect(read.sensors == [light])
        #expect(read.entries.map(\.sample) == [SensorSample(time: 0, values: [120.5]), SensorSample(time: 0, values: [0]),
                                               SensorSample(time: 100 * Self.ms, values: [121])])
    }

    @Test func replayDeliversSamplesAtTheirTimesOnlyToThoseSubscribed() throws {
        let recording = try Self.parse("""
        # EVFLOW SENSORS 1
        S: a iio:device0 polled
        C: illuminance illuminance
        V: 10.000000 a 1
        V: 10.010000 a 2
        V: 10.020000 a 3
        """)
        let scheduler = VirtualTimeScheduler(initialClock: 1000 * Self.ms)
        let replay = SensorReplaySource(recordings: [recording], scheduler: scheduler)
        let seen = PosixLockedBox<[SensorSample]>([])
        let ended = PosixLockedBox<Bool>(false)
        var inner: Disposable?
        let outer = replay.sensors.subscribe(onNext: { stream in
            // Subscribed only from 5 ms: the first sample (at 0) falls due unseen.
            _ = scheduler.schedule(after: .milliseconds(5)) {
                inner = stream.samples.subscribe(onNext: { s in seen.mutate { $0.append(s) } })
            }
            _ = stream.removal.subscribe(onCompleted: { ended.mutate { $0 = true } })
        })
        scheduler.advance(by: .milliseconds(15))
        #expect(seen.value == [SensorSample(time: 1010 * Self.ms, values: [2])])
        #expect(!ended.value)
        scheduler.advance(by: .milliseconds(10))
        #expect(seen.value.map(\.values) == [[2], [3]])
        #expect(ended.value)   // removed after its last sample (removeAtEnd)
        inner?.dispose()
        outer.dispose()
        scheduler.advance(by: .zero)
    }

    /// Issue #34: the last time the limit allows is read, and it replays at --speed 0 from a
    /// clock already years on (the sum `origin + t` trapped for a span near 2⁶³ ns).
    @Test func aRecordingAtTheTimeLimitReadsAndReplays() throws {
        let recording = try Self.parse("""
        # EVFLOW SENSORS 1
        S: a iio:device0 polled
        C: l illuminance
        V: 5.000000 a 1
        V: 2305843014.213693 a 2

        """)
        #expect(recording.entries.map(\.sample.time) == [0, RecordingLimits.maxTimeMicroseconds * 1000])
        let scheduler = VirtualTimeScheduler(initialClock: RecordingLimits.maxTimeNanoseconds)
        let replay = SensorReplaySource(recordings: [recording], scheduler: scheduler, speed: .infinity)
        let times = PosixLockedBox<[Int64]>([])
        let inner = PosixLockedBox<Disposable?>(nil)
        let subscription = replay.sensors.subscribe(onNext: { stream in
            inner.mutate { $0 = stream.samples.subscribe(onNext: { s in times.mutate { $0.append(s.time) } }) }
        })
        scheduler.advance(by: .zero)
        #expect(times.value == [RecordingLimits.maxTimeNanoseconds,
                                RecordingLimits.maxTimeNanoseconds + RecordingLimits.maxTimeMicroseconds * 1000])
        inner.value?.dispose()
        subscription.dispose()
        scheduler.advance(by: .zero)
    }
}

/// A value shared with callbacks in a test.
final class PosixLockedBox<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T
    init(_ value: T) { stored = value }
    var value: T { lock.withLock { stored } }
    func mutate(_ body: (inout T) -> Void) { lock.withLock { body(&stored) } }
}
