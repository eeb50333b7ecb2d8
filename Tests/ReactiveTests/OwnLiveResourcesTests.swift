import Dispatch
import Reactive
import ReactiveTesting
import Synchronization
import Testing

/// The `.ownLiveResources` trait itself: run here by hand around a body, inside a test, so
/// that what it records about the body lands in this test where `withKnownIssue` can see it.
@Suite(".ownLiveResources", .ownLiveResources)
struct OwnLiveResourcesTests {
    /// Holds a disposable beyond the body that created it.
    final class Stash: Sendable {
        private let held = Mutex<SerialDisposable?>(nil)
        func keep(_ disposable: SerialDisposable) { held.withLock { $0 = disposable } }
        func drop() { held.withLock { $0 = nil } }
        var isEmpty: Bool { held.withLock { $0 == nil } }
    }

    struct Boom: Error {}

    /// Runs `body` as `trait` runs a test.
    func runScoped(_ trait: OwnLiveResources, _ body: @Sendable () async throws -> Void) async throws {
        try await trait.provideScope(for: try #require(Test.current), testCase: Test.Case.current,
                                     performing: body)
    }

    @Test("a test that leaves a live resource behind fails, with both counts")
    func leakIsReported() async throws {
        let stash = Stash()
        try await withKnownIssue {
            try await runScoped(OwnLiveResources(settle: .milliseconds(50))) {
                stash.keep(SerialDisposable())
            }
        } matching: { issue in
            issue.comments.contains { $0.rawValue == "live resources leaked: 1 after the test, 0 before" }
        }
        #expect(!stash.isEmpty)
        stash.drop()
    }

    @Test("what another thread releases after the test returns, within the settle time, is no leak")
    func waitsForAsynchronousRelease() async throws {
        let stash = Stash()
        try await runScoped(OwnLiveResources(settle: .seconds(30))) {
            stash.keep(SerialDisposable())
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { stash.drop() }
        }
        // Returned only once the other thread had dropped it: the trait waited.
        #expect(stash.isEmpty)
    }

    @Test("a test that throws is not checked: it has failed already")
    func thrownTestIsNotChecked() async throws {
        let stash = Stash()
        await #expect(throws: Boom.self) {
            try await runScoped(OwnLiveResources(settle: .milliseconds(50))) {
                stash.keep(SerialDisposable())
                throw Boom()
            }
        }
        stash.drop()
    }

    @Test("expectOwned: a count that differs is an issue naming both counts and the comment")
    func expectOwnedReportsAMismatch() {
        let held = SerialDisposable()
        withKnownIssue {
            LiveResources.expectOwned(0, "the disposable is still held")
        } matching: { issue in
            issue.comments.contains { $0.rawValue == "live resources: 1, expected 0 — the disposable is still held" }
        }
        #expect(LiveResources.expectOwned(1))
        _ = held
    }

    @Test("expectOwned within a timeout waits for another thread's release; without one it does not")
    func expectOwnedWaits() async {
        let stash = Stash()
        stash.keep(SerialDisposable())
        await withKnownIssue {
            await LiveResources.expectOwned(0)
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(50)) { stash.drop() }
        #expect(await LiveResources.expectOwned(0, within: .seconds(30)))
    }
}
