import DeviceStreams
import InputModel
import Pipeline
import Reactive
import ReactiveTesting
import Synchronization
import Testing

/// `STATE` of a sensor nobody watches (issue #29, item 7) and its read errors (item 5).
@Suite("SensorHub: a value when asked, and read errors", .ownLiveResources)
struct SensorStateReadOnceTests {
    typealias Rig = SensorHubTests.Rig
    static let light = SensorHubTests.light

    final class Answers: @unchecked Sendable {
        private let lock = Mutex<[SensorLookup]>([])
        func add(_ l: SensorLookup) { lock.withLock { $0.append(l) } }
        var all: [SensorLookup] { lock.withLock { $0 } }
    }

    @Test("issue #29: STATE of a sensor nobody reads reads it once — one subscription, ended after the first sample — and answers its value")
    func readsOnce() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig()
            rig.plug(Self.light, readableOnce: true)
            let answers = Answers()
            rig.hub.stateReadingOnce(of: "als") { answers.add($0) }
            rig.scheduler.advance(by: .zero)
            #expect(rig.counts.subscriptions.load(ordering: .relaxed) == 1)
            #expect(answers.all.isEmpty)                                  // waiting for the read
            rig.samples.onNext(SensorSample(time: 5, values: [42]))
            rig.scheduler.advance(by: .zero)
            #expect(rig.counts.active.load(ordering: .relaxed) == 0)     // one read, then no more reading
            var expected = SensorState(info: Self.light, raw: SensorSample(time: 5, values: [42]),
                                       filtered: SensorSample(time: 5, values: [42]), live: false)
            expected.samplesIn = 1
            expected.samplesOut = 1
            #expect(answers.all == [.found(expected)])
            rig.samples.onNext(SensorSample(time: 6, values: [43]))       // not read: nobody asks
            rig.scheduler.advance(by: .seconds(5))
            #expect(answers.all.count == 1 && rig.counts.subscriptions.load(ordering: .relaxed) == 1)
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("a sensor that gives nothing is answered after the timeout, without a value, and no longer read")
    func timeout() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig()
            rig.plug(Self.light, readableOnce: true)
            let answers = Answers()
            rig.hub.stateReadingOnce(of: "als", timeout: .milliseconds(500)) { answers.add($0) }
            rig.scheduler.advance(by: .milliseconds(499))
            #expect(answers.all.isEmpty)
            rig.scheduler.advance(by: .milliseconds(1))
            #expect(answers.all == [.found(SensorState(info: Self.light, raw: nil, filtered: nil, live: false))])
            #expect(rig.counts.active.load(ordering: .relaxed) == 0)
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("a sensor being read, an unknown name and a replay's sensor are answered at once, reading nothing more")
    func atOnce() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig()
            rig.plug(Self.light, readableOnce: true)
            let answers = Answers()
            rig.hub.stateReadingOnce(of: "nothing") { answers.add($0) }
            #expect(answers.all == [.none])
            let seen = PosixLockedList()
            let w = SensorHubTests.watch(rig.hub, into: seen)
            rig.scheduler.advance(by: .zero)
            rig.hub.stateReadingOnce(of: "als") { answers.add($0) }
            #expect(answers.all.count == 2 && rig.counts.subscriptions.load(ordering: .relaxed) == 1)
            w.dispose()
            let replayed = SensorInfo(id: DeviceID(rawValue: "replayed"), name: "replayed", sysname: "iio:device9",
                                      channels: Self.light.channels, buffered: false)
            rig.sensors.onNext(SensorStream(info: replayed, samples: .never(), removal: .never(),
                                            clock: SampleClock(origin: 0, speed: 2)))   // readableOnce: false
            rig.hub.stateReadingOnce(of: "replayed") { answers.add($0) }
            #expect(answers.all.count == 3)
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("issue #29: the source's failed reads reach STATE; failed after SensorHealth.failedAfter in a row, cleared by a good read")
    func readErrors() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig()
            let health = SensorHealth()
            rig.sensors.onNext(SensorStream(info: Self.light, samples: .never(), removal: .never(), health: health))
            func state() -> SensorState? {
                if case .found(let s) = rig.hub.state(of: "als") { return s }
                return nil
            }
            for _ in 1..<SensorHealth.failedAfter { health.recordError(5) }
            #expect(state()?.readErrors == UInt64(SensorHealth.failedAfter - 1) && state()?.failed == false)
            #expect(health.recordError(5))                                 // the tenth in a row marks it
            #expect(state()?.failed == true && health.lastError == 5)
            health.recordSuccess()
            #expect(state()?.failed == false && state()?.readErrors == UInt64(SensorHealth.failedAfter))
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }
}
