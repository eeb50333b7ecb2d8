import Foundation
import InputModel
import Reactive
import ReactiveTesting
import Testing
@testable import Recording

/// `ReplaySource` playing sessions: one stream per appearance, added and removed at the
/// recorded times (docs/formats/session.md, "Replay").
@Suite("ReplaySource sessions", .ownLiveResources)
struct ReplaySessionTests {
    static let ms: Int64 = 1_000_000

    /// Device `a` plugged in at 0, one key frame at 10 ms, pulled out at 20 ms in the middle of
    /// a frame, plugged in again at 20 ms (same instant, after the removal), a frame at 30 ms,
    /// still present at the end (40 ms, a frame of `b`); `b` present from 5 ms.
    static func session() -> Session {
        let info = DeviceInfo(name: "Key", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1),
                              capabilities: [EventType.key: [30]])
        var other = info
        other.id = DeviceID(rawValue: info.id.rawValue + "-b")
        func key(_ t: Int64, _ value: Int32) -> [InputEvent] {
            [InputEvent(time: t * ms, type: EventType.key, code: 30, value: value),
             InputEvent(time: t * ms, type: EventType.syn, code: SynCode.report, value: 0)]
        }
        return Session(devices: [SessionDevice(handle: "a", info: info), SessionDevice(handle: "b", info: other)],
                       appearances: [
                           SessionAppearance(device: 0, added: 0, removed: 20 * ms,
                                             events: key(10, 1) + [InputEvent(time: 15 * ms, type: EventType.key, code: 30, value: 0)]),
                           SessionAppearance(device: 1, added: 5 * ms, removed: nil, events: key(40, 1)),
                           SessionAppearance(device: 0, added: 20 * ms, removed: nil, events: key(30, 0)),
                       ])
    }

    /// What a subscriber saw: `<ms> +<id suffix>` per stream, `<ms> <id> <value>` per frame,
    /// `<ms> -<id>` per completion.
    static func play(removeAtEnd: Bool, stopAt: Int64? = nil, loop: Bool = false,
                     until: Int64 = 1_000) -> (log: [String], dropped: Int) {
        let scheduler = VirtualTimeScheduler()
        let replay = ReplaySource(sessions: [session()], scheduler: scheduler, loop: loop,
                                  loopGap: .milliseconds(100), removeAtEnd: removeAtEnd)
        var log: [String] = []
        let name = { (id: DeviceID) in id.rawValue.hasSuffix("-b") ? "b" : "a" }
        let subscription = replay.devices.subscribe(onNext: { stream in
            let id = name(stream.info.id)
            log.append("\(scheduler.now / ms) +\(id)")
            _ = stream.frames.subscribe(onNext: { frame in
                log.append("\(scheduler.now / ms) \(id) \(frame.events.map(\.value))")
            }, onCompleted: { log.append("\(scheduler.now / ms) -\(id)") })
        })
        scheduler.advance(to: (stopAt ?? until) * ms)
        subscription.dispose()
        scheduler.run(until: until * ms)
        return (log, replay.droppedIncompleteEvents)
    }

    @Test func devicesComeAndGoAtTheirRecordedTimes() {
        let (log, dropped) = Self.play(removeAtEnd: true)
        #expect(log == ["0 +a", "5 +b", "10 a [1]", "20 -a", "20 +a", "30 a [0]", "40 b [1]", "40 -a", "40 -b"])
        #expect(dropped == 1, "the release at 15 ms was cut off by the removal")
    }

    @Test func devicesPresentAtTheEndStayUntilTheReplayStopsWithoutRemoveAtEnd() {
        let (log, _) = Self.play(removeAtEnd: false, stopAt: 500)
        // The recorded removal at 20 ms happens anyway; the devices present at the end stay.
        #expect(log == ["0 +a", "5 +b", "10 a [1]", "20 -a", "20 +a", "30 a [0]", "40 b [1]", "500 -a", "500 -b"])
    }

    @Test func disposingStopsTheReplayEvenWhenTheSourceGoesAtOnce() {
        let scheduler = VirtualTimeScheduler()
        var log: [String] = []
        var replay: ReplaySource? = ReplaySource(sessions: [Self.session()], scheduler: scheduler, loop: true,
                                                 loopGap: .milliseconds(100), removeAtEnd: false)
        let subscription = replay!.devices.subscribe(onNext: { stream in
            log.append("\(scheduler.now / Self.ms) +")
            _ = stream.frames.subscribe(onNext: { _ in log.append("\(scheduler.now / Self.ms) frame") },
                                        onCompleted: { log.append("\(scheduler.now / Self.ms) -") })
        })
        withExtendedLifetime(replay) { scheduler.advance(to: 150 * Self.ms) }
        #expect(log.contains("150 frame"), "the second pass is playing")
        subscription.dispose()   // the stop is scheduled ...
        replay = nil             // ... and the source goes before it has run
        scheduler.run(until: 1_000 * Self.ms)
        #expect(log.suffix(2) == ["150 -", "150 -"], "the devices present are completed, nothing plays after")
        #expect(!scheduler.hasPendingWork, "the replay's timer is not armed any more")
    }

    @Test("hasStarted: once, on the scheduler, after the devices due at the start are added (what made evflowd's 'input ready: N devices' say 0 or 1 for one file, issue #25); at once for a late subscriber")
    func hasStartedComesAfterTheFirstDevices() {
        let scheduler = VirtualTimeScheduler()
        let replay = ReplaySource(sessions: [Self.session()], scheduler: scheduler, removeAtEnd: false)
        var log: [String] = []
        let started = replay.hasStarted.subscribe(onNext: { log.append("started") }, onCompleted: { log.append("done") })
        let subscription = replay.devices.subscribe(onNext: { _ in log.append("\(scheduler.now / Self.ms) +") })
        #expect(log.isEmpty, "the replay begins on the scheduler")
        scheduler.advance(to: 10 * Self.ms)
        #expect(log == ["0 +", "started", "done", "5 +"], "device a (at 0) before it, b (at 5 ms) after")
        var late = 0
        let again = replay.hasStarted.subscribe(onNext: { late += 1 })
        #expect(late == 1)
        started.dispose()
        again.dispose()
        subscription.dispose()
        scheduler.run()
    }

    @Test func aLoopingReplayAddsTheDevicesAgain() {
        let (log, _) = Self.play(removeAtEnd: false, stopAt: 150, loop: true)
        // 40 ms of session, then 100 ms gap: the second pass starts at 140 ms; stopping the
        // replay at 150 ms completes the devices present then.
        #expect(log == ["0 +a", "5 +b", "10 a [1]", "20 -a", "20 +a", "30 a [0]", "40 b [1]", "40 -a", "40 -b",
                        "140 +a", "145 +b", "150 a [1]", "150 -a", "150 -b"])
    }

    /// Four devices added and removed `cycles` times, every line at time 0, then one key
    /// frame per device at 1 ms (issue #34's burst, smaller).
    static func burst(cycles: Int) -> Session {
        let devices = (0..<4).map { d in
            var info = DeviceInfo(name: "Burst \(d)", inputID: InputID(bustype: 3, vendor: 1, product: UInt16(d + 1), version: 1),
                                  capabilities: [EventType.key: [30]])
            info.id = DeviceID(rawValue: "burst-\(d)")
            return SessionDevice(handle: "d\(d)", info: info)
        }
        var timeline: [SessionEntry] = []
        for _ in 0..<cycles {
            for d in 0..<4 { timeline.append(SessionEntry(time: 0, device: d, action: .add)) }
            for d in 0..<4 { timeline.append(SessionEntry(time: 0, device: d, action: .remove)) }
        }
        for d in 0..<4 {
            timeline.append(SessionEntry(time: 0, device: d, action: .add))
            timeline.append(SessionEntry(time: ms, device: d, action: .event(type: EventType.key, code: 30, value: 1)))
            timeline.append(SessionEntry(time: ms, device: d, action: .event(type: EventType.syn, code: SynCode.report, value: 0)))
        }
        return Session(devices: devices, timeline: timeline)
    }

    /// Issue #34, bug 5: `Player.run` delivered every due step in one turn and never yielded:
    /// a session adding and removing four devices 25,000 times at time 0 held evflowd's input
    /// thread for 24 s (`LATENCY` answered after 24.6 s, SIGTERM took 17–22 s). Work scheduled
    /// during the burst — here a job scheduled when the first device is added, as a `LATENCY`
    /// question or the shutdown's disposal arrive — now runs after one bounded batch, at the
    /// same virtual time; what the replay delivers, its order and its times are unchanged, and
    /// `hasStarted` still follows the whole burst.
    @Test func aBurstAtOneInstantYieldsToTheSchedulerBetweenBatches() throws {
        let cycles = 2_500
        let scheduler = VirtualTimeScheduler()
        let replay = ReplaySource(sessions: [Self.burst(cycles: cycles)], scheduler: scheduler)
        var log: [String] = []
        var probe: (seen: Int, at: Int64)?
        var startedAfter: Int?
        let started = replay.hasStarted.subscribe(onNext: { startedAfter = log.count })
        let subscription = replay.devices.subscribe(onNext: { stream in
            let id = stream.info.id.rawValue
            if log.isEmpty { _ = scheduler.schedule { probe = (log.count, scheduler.now) } }
            log.append("\(scheduler.now) +\(id)")
            _ = stream.frames.subscribe(onNext: { frame in log.append("\(scheduler.now) \(id) \(frame.events.map(\.value))") },
                                        onCompleted: { log.append("\(scheduler.now) -\(id)") })
        })
        scheduler.advance(to: 10 * Self.ms)
        subscription.dispose()
        started.dispose()
        scheduler.run()

        var expected: [String] = []
        let ids = (0..<4).map { "burst-\($0)" }
        for _ in 0..<cycles {
            expected += ids.map { "0 +\($0)" }
            expected += ids.map { "0 -\($0)" }
        }
        expected += ids.map { "0 +\($0)" }
        expected += ids.map { "\(Self.ms) \($0) [1]" }
        expected += ids.map { "\(Self.ms) -\($0)" }
        // Compared line by line: 20,012 lines printed whole on a failure help nobody.
        #expect(log.count == expected.count)
        let firstDifference = zip(log, expected).enumerated().first { $0.element.0 != $0.element.1 }
        #expect(firstDifference == nil, "every step, in order, at its time: line \(firstDifference?.offset ?? -1) is \(firstDifference?.element.0 ?? "")")
        let seen = try #require(probe)
        // Before: the probe ran after all 20,004 steps of time 0. Now after the first batch:
        // at most 1,024 steps (`Player.turnBudget`, an add or a removal weighing 16 of it).
        #expect(seen.at == 0)
        #expect(seen.seen <= 1_024, "the job scheduled during the burst ran after \(seen.seen) of \(cycles * 8 + 4) steps")
        #expect(seen.seen > 0)
        #expect(startedAfter == cycles * 8 + 4, "hasStarted once every device due at the start is added")
    }
}
