import Reactive
import ReactiveTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Helpers for the operator tests in this folder.
enum MarbleRun {
    /// Like `TestScheduler.start`, but subscribes through `subscribe(onNext:onError:onCompleted:)`
    /// so that the chain is disposed after a stop event, as in production code.
    static func startTerminal<Element>(_ scheduler: TestScheduler, created: TestTime = 100, subscribed: TestTime = 200,
                                       disposed: TestTime = 1000,
                                       _ create: @escaping () -> Observable<Element>) -> TestableObserver<Element> {
        var source: Observable<Element>?
        var subscription: Disposable?
        let observer = scheduler.createObserver(Element.self)
        scheduler.scheduleAt(created) { source = create() }
        scheduler.scheduleAt(subscribed) {
            subscription = source!.subscribe(onNext: { observer.onNext($0) }, onError: { observer.onError($0) },
                                             onCompleted: { observer.onCompleted() })
        }
        scheduler.scheduleAt(disposed) {
            subscription?.dispose()
            subscription = nil
            source = nil
        }
        scheduler.start()
        return observer
    }
}

/// A scheduler that counts the jobs scheduled on it and forwards them to another one.
///
/// While `hold()` is in effect, forwarded jobs wait (on the base scheduler's thread) until
/// `release()`, so a test can make a burst arrive while a job is pending, deterministically.
/// `waitUntilIdle()` is the signal that every job scheduled so far has returned: after it,
/// nothing more is delivered through this scheduler unless a new job is scheduled.
final class JobCountingScheduler: ImmediateSchedulerType, @unchecked Sendable {
    let base: ImmediateSchedulerType
    private let counter = SharedCounter()
    private let ended = SharedCounter()
    private let held = DispatchGroup()

    init(_ base: ImmediateSchedulerType) { self.base = base }

    /// Jobs scheduled so far.
    var scheduled: Int { counter.value }

    /// Jobs that have run to their end.
    var finished: Int { ended.value }

    /// Waits until every job scheduled so far has returned, for at most `seconds`; whether
    /// they all did.
    func waitUntilIdle(seconds: Int64 = 10) -> Bool {
        let deadline = monotonicNow() + seconds * 1_000_000_000
        while finished != scheduled && monotonicNow() < deadline { usleep(1_000) }
        return finished == scheduled
    }

    /// Makes jobs wait before they run.
    func hold() { held.enter() }

    /// Lets waiting jobs run.
    func release() { held.leave() }

    @discardableResult
    func schedule(_ action: @escaping () -> Void) -> Disposable {
        counter.add(1)
        let held = self.held, ended = self.ended
        return base.schedule {
            held.wait()
            action()
            ended.add(1)
        }
    }
}

import Dispatch

import Synchronization

/// A thread-safe counter for tests.
final class SharedCounter: Sendable {
    private let atomic = Atomic<Int>(0)
    var value: Int { atomic.load(ordering: .acquiring) }
    @discardableResult
    func add(_ n: Int) -> Int { atomic.wrappingAdd(n, ordering: .acquiringAndReleasing).newValue }
}

/// A thread-safe list for events that arrive on other threads.
final class SharedList<Value: Sendable>: Sendable {
    private let mutex = Mutex<[Value]>([])
    func append(_ value: Value) { mutex.withLock { $0.append(value) } }
    var values: [Value] { mutex.withLock { $0 } }
}
