import InputModel
@testable import Pipeline
import Reactive
import ReactiveTesting
import Testing

/// The filter stage's three outlets, in the order the hub relies on: `onOutput` (where it
/// writes a grabbed device's twin) sees each output first, then `onUpdate` (the state store's
/// writer) with the counters of that very step, then downstream (1 tick = 1 ms).
@Suite("filter stage: onOutput, onUpdate, downstream", .ownLiveResources)
struct FilterStageOrderTests {
    @Test("every output goes to onOutput, then onUpdate with that step's counters, then downstream — from a frame and from the timer; a held frame gives onUpdate(nil) only")
    func order() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<InputFrame>()
        var log: [String] = []
        let stage = NoiseFilterStage.subscribe(
            subject.asObservable(), settings(EventType.key, C.KEY_A, .chatter(window: 25 * ms)),
            scheduler: scheduler, settingsUpdates: .never(),
            onOutput: { log.append("output \(describe($0))") },
            onUpdate: { frame, counters in
                log.append("update \(frame.map(describe) ?? "nil") in=\(counters.framesIn) out=\(counters.framesOut) at \(scheduler.clockTicks)")
            },
            onSpurious: nil,
            downstream: AnyObserver { event in
                if case .next(let f) = event { log.append("down \(describe(f))") }
            })
        subject.onNext(frame(0, EventType.key, C.KEY_A, 1))    // through at once
        scheduler.advanceTo(10)
        subject.onNext(frame(10, EventType.key, C.KEY_A, 0))   // held: the window ends at 25
        scheduler.advanceTo(100)
        stage.dispose()
        #expect(log == [
            "output @0 KEY_A 1", "update @0 KEY_A 1 in=1 out=1 at 0", "down @0 KEY_A 1",
            "update nil in=2 out=1 at 10",
            "output @25 KEY_A 0", "update @25 KEY_A 0 in=2 out=2 at 25", "down @25 KEY_A 0",
            "update nil in=2 out=2 at 35",   // the release's own window ends: nothing comes out
        ])
    }
}
