import Reactive
import Testing

/// A test trait: every test runs with a `LiveResources.Scope` of its own, so its checks count
/// the resources it created (`LiveResources.owned`), not those of the tests running beside it.
/// Put it on a suite (`@Suite(.ownLiveResources)`): it applies to every test in it, nested
/// suites included.
public struct OwnLiveResources: TestTrait, SuiteTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?,
                             performing function: @Sendable () async throws -> Void) async throws {
        guard testCase != nil else { return try await function() }
        try await LiveResources.$scope.withValue(LiveResources.Scope()) { try await function() }
    }
}

extension Trait where Self == OwnLiveResources {
    /// Each test counts its own live resources (see `OwnLiveResources`).
    public static var ownLiveResources: Self { OwnLiveResources() }
}

extension LiveResources {
    /// The live resources the running test created and has not released yet: its own
    /// `LiveResources.Scope`, bound by `.ownLiveResources`. Stops the test process with a
    /// message when no scope is bound (the suite lacks the trait): a check of the
    /// process-wide count would be wrong whenever other tests run at the same time.
    public static var owned: Int {
        guard let scope else {
            preconditionFailure("LiveResources.owned outside a scope: add .ownLiveResources to the test's @Suite")
        }
        return scope.count
    }
}
