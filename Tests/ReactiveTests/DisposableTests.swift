import Reactive
import Synchronization
import ReactiveTesting
import Testing

/// The core's disposables: ordering rules and thread safety.
@Suite("disposables", .ownLiveResources)
struct DisposableTests {
    @Test("SingleAssignmentDisposable: dispose before set disposes the disposable when it is set")
    func singleAssignmentDisposeFirst() {
        let holder = SingleAssignmentDisposable()
        let inner = BooleanDisposable()
        holder.dispose()
        #expect(holder.isDisposed)
        #expect(!inner.isDisposed)
        holder.setDisposable(inner)
        #expect(inner.isDisposed)
    }

    @Test("SingleAssignmentDisposable: set then dispose disposes once")
    func singleAssignmentSetFirst() {
        let runs = Atomic<Int>(0)
        let holder = SingleAssignmentDisposable()
        holder.setDisposable(Disposables.create { runs.wrappingAdd(1, ordering: .relaxed) })
        holder.dispose()
        holder.dispose()
        #expect(runs.load(ordering: .relaxed) == 1)
    }

    @Test("SerialDisposable: replacing disposes the previous; after dispose a newcomer is disposed at once")
    func serial() {
        let serial = SerialDisposable()
        let a = BooleanDisposable(), b = BooleanDisposable(), c = BooleanDisposable()
        serial.disposable = a
        #expect(!a.isDisposed)
        serial.disposable = b
        #expect(a.isDisposed && !b.isDisposed)
        serial.dispose()
        #expect(b.isDisposed && serial.isDisposed)
        serial.disposable = c
        #expect(c.isDisposed)
    }

    @Test("CompositeDisposable: insert after dispose disposes the newcomer; remove disposes the member")
    func composite() {
        let group = CompositeDisposable()
        let a = BooleanDisposable(), b = BooleanDisposable(), late = BooleanDisposable()
        let keyA = group.insert(a)
        group.insert(b)
        #expect(group.count == 2)
        group.remove(for: keyA!)
        #expect(a.isDisposed && !b.isDisposed && group.count == 1)
        group.dispose()
        #expect(b.isDisposed && group.isDisposed)
        #expect(group.insert(late) == nil)
        #expect(late.isDisposed)
    }

    @Test("DisposeBag disposes its contents on deinit; a new bag cancels the old one")
    func disposeBag() {
        let a = BooleanDisposable(), b = BooleanDisposable()
        var bag = DisposeBag()
        a.disposed(by: bag)
        b.disposed(by: bag)
        #expect(!a.isDisposed && !b.isDisposed)
        bag = DisposeBag()
        #expect(a.isDisposed && b.isDisposed)
        let c = BooleanDisposable()
        do {
            let scoped = DisposeBag()
            c.disposed(by: scoped)
        }
        #expect(c.isDisposed)
        _ = bag
    }

    @Test("subscriptions disposed from several threads at once, and while being set up: each upstream disposed once (regression: the slot was passed inout, so the losing side's access overlapped the winner's — a Swift access race under ThreadSanitizer)")
    func concurrentDisposeOfSubscriptions() {
        let count = 500
        let upstreamDisposals = Atomic<Int>(0)
        let handlers = Atomic<Int>(0)
        // An upstream that counts its disposal; `subscribe(onNext:)` (GuardedObserver),
        // an operator (OperatorSink: map) and `Observable.create` (GuardedObserver) over it.
        let source = Observable<Int>.create { _ in Disposables.create { upstreamDisposals.wrappingAdd(1, ordering: .relaxed) } }
        let subscriptions: [Disposable] = (0..<count).map { i in
            switch i % 3 {
            case 0: source.subscribe(onNext: { _ in }, onDisposed: { handlers.wrappingAdd(1, ordering: .relaxed) })
            case 1: source.map { $0 + 1 }.subscribe(onNext: { _ in }, onDisposed: { handlers.wrappingAdd(1, ordering: .relaxed) })
            default: Observable<Int>.create { o in source.subscribe(o) }
                .subscribe(onNext: { _ in }, onDisposed: { handlers.wrappingAdd(1, ordering: .relaxed) })
            }
        }
        runConcurrently(threads: 4) { t in
            for i in 0..<count { subscriptions[(i + t * 125) % count].dispose() }
        }
        #expect(upstreamDisposals.load(ordering: .relaxed) == count)
        #expect(handlers.load(ordering: .relaxed) == count)
        // A SingleAssignmentDisposable set on one thread while another disposes it.
        let holders = (0..<count).map { _ in SingleAssignmentDisposable() }
        let inner = Atomic<Int>(0)
        runConcurrently(threads: 2) { t in
            for h in holders {
                if t == 0 { h.setDisposable(Disposables.create { inner.wrappingAdd(1, ordering: .relaxed) }) } else { h.dispose() }
            }
        }
        #expect(inner.load(ordering: .relaxed) == count)
    }

    @Test("Disposables.create(with:) runs its action once under concurrent dispose from many threads")
    func anonymousOnce() {
        let count = 2_000
        let runs = Atomic<Int>(0)
        let disposables = (0..<count).map { _ in
            Disposables.create { runs.wrappingAdd(1, ordering: .relaxed) }
        }
        runConcurrently(threads: 8) { t in
            // Each thread walks the list from a different starting point.
            for i in 0..<count { disposables[(i + t * 250) % count].dispose() }
        }
        #expect(runs.load(ordering: .relaxed) == count)
        let allDisposed = disposables.allSatisfy { $0.isDisposed }
        #expect(allDisposed)
    }

    @Test("SerialDisposable and CompositeDisposable under concurrent use: everything disposed exactly once (regression: their Mutex was invisible to ThreadSanitizer, which reported every contended insert as a race)")
    func concurrentHolders() {
        let runs = Atomic<Int>(0)
        let serial = SerialDisposable()
        let group = CompositeDisposable()
        let perThread = 1_000
        runConcurrently(threads: 4) { t in
            for i in 0..<perThread {
                let d = Disposables.create { runs.wrappingAdd(1, ordering: .relaxed) }
                if t % 2 == 0 { serial.disposable = d } else { group.insert(d) }
                if t == 3 && i == perThread / 2 { group.dispose(); serial.dispose() }
            }
        }
        serial.dispose()
        group.dispose()
        #expect(runs.load(ordering: .relaxed) == 4 * perThread)
    }
}
