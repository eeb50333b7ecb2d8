import DeviceStreams
import Foundation
import InputModel
import Pipeline
import Reactive
import ReactiveTesting
import Recording
import Synchronization
import Testing

/// A sensor replay filters the same at any speed: the filters decide on sample time, and their
/// timers wait for the samples recorded before their deadlines (`SampleClock`).
@Suite("Sensor replay speed", .ownLiveResources)
struct SensorReplaySpeedTests {
    static let fixtures = ["accel-45deg.sensors", "accel-tilt-45.sensors", "als-phantom-zero.sensors",
                           "light-phantom-zero.sensors"]

    /// What the hub's filters (the built-in settings, as `SensorHub(scheduler:config:)` runs
    /// them) publish for every sensor of `recording` replayed at `speed` in virtual time, in
    /// the order published: sensor id and sample.
    static func published(_ recording: SensorRecording, speed: Double) -> [String] {
        let scheduler = VirtualTimeScheduler(initialClock: 1_000_000_000_000)
        let replay = SensorReplaySource(recordings: [recording], scheduler: scheduler, speed: speed)
        let config = FilterConfig()
        let seen = Lines()
        var subscriptions: [Disposable] = []
        let running = replay.sensors.subscribe(onNext: { stream in
            let info = stream.info
            subscriptions.append(
                stream.samples
                    .filterSensor(config.sensorSettings(for: info), channels: info.channels, scheduler: scheduler,
                                  clock: stream.clock)
                    .subscribe(onNext: { seen.append("\(info.id.rawValue) \($0.time) \($0.values)") }))
        })
        let last = recording.entries.map(\.sample.time).max() ?? 0
        let span = speed.isInfinite ? 0 : Int64((Double(last) / speed).rounded(.up))
        scheduler.advance(by: RxTimeInterval(nanoseconds: span + 10_000_000_000))   // and every deadline after it
        running.dispose()
        subscriptions.forEach { $0.dispose() }
        scheduler.advance(by: .zero)
        return seen.items
    }

    /// The lines published, shared with the subscription's closure.
    final class Lines: Sendable {
        private let lock = Mutex<[String]>([])
        func append(_ line: String) { lock.withLock { $0.append(line) } }
        var items: [String] { lock.withLock { $0 } }
    }

    @Test("each shipped sensor fixture publishes the same values at the same sample times at speeds 0.5, 1, 3 and max",
          arguments: fixtures)
    func sameOutputAtAnySpeed(_ name: String) throws {
        let recording = try SensorRecording.read(path: Fixtures.root.appendingPathComponent("sensors/\(name)").path)
        let atPace = Self.published(recording, speed: 1)
        #expect(!atPace.isEmpty)
        for speed in [0.5, 3, .infinity] {
            #expect(Self.published(recording, speed: speed) == atPace, "speed \(speed)")
        }
    }

    @Test("half speed: the light fixture's phantom 0 lx is not published")
    func noPhantomZeroAtHalfSpeed() throws {
        let path = Fixtures.root.appendingPathComponent("sensors/als-phantom-zero.sensors").path
        let levels = Self.published(try SensorRecording.read(path: path), speed: 0.5)
        #expect(levels.count >= 2)   // ~120 lx, then ~400 lx
        #expect(!levels.contains { $0.hasSuffix(" [0.0]") })
    }

    @Test("the configured hub hands each stream's clock to its filters: no phantom 0 lx from a half-speed replay")
    func hubAtHalfSpeed() throws {
        let baseline = LiveResources.owned
        do {
            let path = Fixtures.root.appendingPathComponent("sensors/als-phantom-zero.sensors").path
            let recording = try SensorRecording.read(path: path)
            let scheduler = VirtualTimeScheduler(initialClock: 1_000_000_000_000)
            let hub = SensorHub(scheduler: scheduler, config: FilterConfig())
            let running = hub.run(SensorReplaySource(recordings: [recording], scheduler: scheduler, speed: 0.5).sensors)
            let seen = PosixLockedList()
            let watching = SensorHubTests.watch(hub, into: seen)
            scheduler.advance(by: .seconds(20))   // the 5 s recording at half speed, and more
            let levels = seen.items.compactMap { if case .filtered(let s, _)? = $0 { s.values[0] } else { nil } }
            #expect(levels.count >= 2)   // ~120 lx, then ~400 lx
            #expect(!levels.contains(0))
            watching.dispose()
            running.dispose()
            scheduler.advance(by: .zero)
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("the clock of a replay: a deadline's scheduler time follows every sample of its time")
    func replayClock() {
        let origin: Int64 = 1_000
        #expect(SampleClock.live.schedulerTime(5_000) == 5_000)
        #expect(SampleClock(origin: origin, speed: 1).schedulerTime(5_000) == 5_000)
        #expect(SampleClock(origin: origin, speed: 0.5).schedulerTime(origin + 300) == origin + 601)
        #expect(SampleClock(origin: origin, speed: 3).schedulerTime(origin + 300) == origin + 101)
        #expect(SampleClock(origin: origin, speed: .infinity).schedulerTime(origin + 300) == origin + 1)
        // A looping device replay's later pass: its event times start elsewhere than its clock.
        #expect(SampleClock(origin: origin, speed: 0.5, sampleOrigin: 9_000).schedulerTime(9_300) == origin + 601)
        #expect(SampleClock(origin: origin, speed: 1, sampleOrigin: 9_000).schedulerTime(9_300) == origin + 301)
        // A slow pace stretches far deadlines beyond Int64: they saturate ("never"), not trap.
        #expect(SampleClock(origin: origin, speed: 0.001).deliveryTime(recorded: .max / 2) == .max)
        #expect(SampleClock(origin: origin, speed: 0.001).schedulerTime(.max - 5) == .max)
        #expect(SampleClock(origin: -origin, speed: 0.5).schedulerTime(.max) == .max)
    }
}
