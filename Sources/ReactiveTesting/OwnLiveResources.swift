import Reactive
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A test trait: every test runs with a `LiveResources.Scope` of its own and must leave it as it
/// found it.
///
/// Before the test it binds a fresh scope and takes its count (the baseline); the test runs;
/// when it returns, the trait waits for the count to come back to the baseline — up to `settle`,
/// for work still finishing on other threads (a queued dispose, a drain job, a client handler
/// closing) — and records an issue against the test naming both counts if it does not. So a
/// test that only needs "nothing leaked" carries the trait and no code; a test that checks the
/// count part-way uses `LiveResources.expectOwned`. A test that throws is not checked: it has
/// failed already, and what it left half-built would only add noise.
///
/// Put it on a suite (`@Suite(.ownLiveResources)`): it applies to every test in it, nested
/// suites included. Because every test counts only what it built, the checks hold while other
/// tests run in parallel.
public struct OwnLiveResources: TestTrait, SuiteTrait, TestScoping {
    /// How long the trait waits, after the test returns, for the count to settle.
    public var settle: Duration

    /// A trait that waits up to `settle` for the count to come back to the baseline.
    public init(settle: Duration = .seconds(5)) {
        self.settle = settle
    }

    /// On a suite, the trait applies to every test in it, nested suites included.
    public var isRecursive: Bool { true }

    /// Runs one test case under a fresh scope and checks the count after it (a suite itself
    /// only passes through).
    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }
        let scope = LiveResources.Scope()
        let baseline = scope.count
        try await LiveResources.$scope.withValue(scope) { try await function() }
        if await !LiveResources.settle(scope, to: baseline, within: settle) {
            Issue.record("live resources leaked: \(scope.count) after the test, \(baseline) before",
                         sourceLocation: test.sourceLocation)
        }
    }
}

extension Trait where Self == OwnLiveResources {
    /// Each test counts its own live resources and must release them (see `OwnLiveResources`).
    public static var ownLiveResources: Self { OwnLiveResources() }

    /// Each test counts its own live resources and must release them within `settle` of
    /// returning (see `OwnLiveResources`).
    public static func ownLiveResources(settle: Duration) -> Self { OwnLiveResources(settle: settle) }
}

extension LiveResources {
    /// The live resources the running test created and has not released yet: its own
    /// `LiveResources.Scope`, bound by `.ownLiveResources`. Stops the test process with a
    /// message when no scope is bound (the suite lacks the trait): a check of the
    /// process-wide count would be wrong whenever other tests run at the same time.
    public static var owned: Int {
        boundScope().count
    }

    /// Expects the running test to own `expected` live resources: at once, or — with a
    /// `timeout` — at the latest when it has passed (for disposal finishing on other threads).
    /// Records an issue naming both counts otherwise. For checks part-way through a test; the
    /// check at its end is `.ownLiveResources`'s.
    @discardableResult
    public static func expectOwned(_ expected: Int, within timeout: Duration = .zero, _ comment: Comment? = nil,
                                   sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let scope = boundScope()
        let deadline = monotonicNow() + timeout.nanoseconds
        while scope.count != expected && monotonicNow() < deadline { usleep(1_000) }
        return record(scope, expected, comment, sourceLocation)
    }

    /// Expects the running test to own `expected` live resources: at once, or — with a
    /// `timeout` — at the latest when it has passed. The asynchronous form of
    /// `expectOwned(_:within:_:sourceLocation:)`, which waits without blocking a thread.
    @discardableResult
    public static func expectOwned(_ expected: Int, within timeout: Duration = .zero, _ comment: Comment? = nil,
                                   sourceLocation: SourceLocation = #_sourceLocation) async -> Bool {
        let scope = boundScope()
        _ = await settle(scope, to: expected, within: timeout)
        return record(scope, expected, comment, sourceLocation)
    }

    /// Whether `scope`'s count is `expected`, or comes to it within `timeout`.
    static func settle(_ scope: Scope, to expected: Int, within timeout: Duration) async -> Bool {
        let deadline = monotonicNow() + timeout.nanoseconds
        while scope.count != expected && monotonicNow() < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
        return scope.count == expected
    }

    private static func record(_ scope: Scope, _ expected: Int, _ comment: Comment?,
                               _ sourceLocation: SourceLocation) -> Bool {
        let count = scope.count
        guard count != expected else { return true }
        let what = "live resources: \(count), expected \(expected)"
        Issue.record(Comment(rawValue: comment.map { "\(what) — \($0.rawValue)" } ?? what), sourceLocation: sourceLocation)
        return false
    }

    private static func boundScope() -> Scope {
        guard let scope else {
            preconditionFailure("LiveResources.owned outside a scope: add .ownLiveResources to the test's @Suite")
        }
        return scope
    }
}

extension Duration {
    /// The duration in whole nanoseconds (test timeouts: seconds, never centuries).
    fileprivate var nanoseconds: Int64 {
        components.seconds * 1_000_000_000 + components.attoseconds / 1_000_000_000
    }
}
