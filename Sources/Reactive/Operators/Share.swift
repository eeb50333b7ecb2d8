/// How long `share`'s internal subject lives. Only `.whileConnected` exists here.
public enum SubjectLifetimeScope: Sendable {
    /// The subject lives while at least one subscriber is connected; after the last one
    /// leaves, or after the source terminates, the next subscriber starts a fresh
    /// subscription to the source with an empty replay buffer. (RxSwift's `.forever` is not
    /// provided: it keeps a terminated subject and replays its stop event forever.)
    case whileConnected
}

extension ObservableType {
    /// Shares one subscription to this sequence among all subscribers (reference counted),
    /// replaying the last `replay` elements to each new subscriber.
    ///
    /// - Element: every subscriber receives the elements emitted while it is subscribed;
    ///   with `replay > 0`, a new subscriber first receives up to `replay` most recent
    ///   elements of the current connection.
    /// - Connection: the first subscriber subscribes to the source (after it has itself been
    ///   attached, so it sees elements emitted during `subscribe`); the last disposal
    ///   disposes the source subscription. A later subscriber reconnects afresh.
    /// - Completion / Error: passed on to every current subscriber; the connection ends, so
    ///   the next subscriber resubscribes the source (scope `.whileConnected`). A subscriber
    ///   that arrives while the stop event is being delivered receives it too.
    /// - Disposal: disposing one subscriber never affects the others.
    /// - Scheduler: none; delivery is serial and lock-free through a subject's gate; a short
    ///   critical section guards only connect and disconnect.
    @inlinable
    public func share(replay: Int = 0, scope: SubjectLifetimeScope = .whileConnected) -> Observable<Element> {
        let shared = ShareWhileConnected(source: asObservable(), replay: replay)
        return Observable { shared.subscribe($0) }
    }
}

/// The state shared by every subscription of one `share()` result. Not counted in
/// `LiveResources`: it lives as long as the `Observable` value, not per subscription.
@usableFromInline
final class ShareWhileConnected<Element>: @unchecked Sendable {
    private let source: Observable<Element>
    private let replay: Int
    private let connection = PosixLocked<ShareConnection<Element>?>(nil)

    @usableFromInline
    init(source: Observable<Element>, replay: Int) {
        self.source = source
        self.replay = max(replay, 0)
    }

    @usableFromInline
    func subscribe(_ observer: AnyObserver<Element>) -> Disposable {
        let (current, isNew) = connection.withLock { slot -> (ShareConnection<Element>, Bool) in
            if let existing = slot {
                existing.refCount += 1
                return (existing, false)
            }
            let fresh = ShareConnection<Element>(replay: replay)
            fresh.refCount = 1
            slot = fresh
            return (fresh, true)
        }
        let subscription = current.subscribe(observer)
        if isNew { current.connect(source, parent: self) }
        return Disposables.create { [self] in
            subscription.dispose()
            self.release(current)
        }
    }

    /// One subscriber left; the last one ends the connection.
    private func release(_ current: ShareConnection<Element>) {
        let disconnect = connection.withLock { slot -> Bool in
            current.refCount -= 1
            guard current.refCount == 0, slot === current else { return false }
            slot = nil
            return true
        }
        if disconnect { current.upstream.dispose() }
    }

    /// The source terminated: later subscribers must start a new connection.
    fileprivate func detach(_ current: ShareConnection<Element>) {
        connection.withLock { slot in
            if slot === current { slot = nil }
        }
    }
}

/// One connection: the subject every subscriber listens to and the source subscription
/// that feeds it.
final class ShareConnection<Element>: @unchecked Sendable {
    /// Counts this object in `LiveResources` until it is destroyed.
    private let live = LiveResources.Token()
    /// Subscribers of this connection; guarded by the parent's lock.
    var refCount = 0
    let upstream = SingleAssignmentDisposable()
    private let send: AnyObserver<Element>
    private let attach: (AnyObserver<Element>) -> Disposable

    init(replay: Int) {
        if replay > 0 {
            let subject = ReplaySubject<Element>(bufferSize: replay)
            send = subject.asObserver()
            attach = { subject.subscribe($0) }
        } else {
            let subject = PublishSubject<Element>()
            send = subject.asObserver()
            attach = { subject.subscribe($0) }
        }
    }

    func subscribe(_ observer: AnyObserver<Element>) -> Disposable {
        attach(observer)
    }

    func connect(_ source: Observable<Element>, parent: ShareWhileConnected<Element>) {
        let send = self.send
        upstream.setDisposable(source.subscribe(AnyObserver { [weak parent] event in
            // Strong `self`: the cycle through `upstream` ends when `upstream` is disposed.
            if event.isStopEvent {
                parent?.detach(self)
                send.on(event)
                self.upstream.dispose()
            } else {
                send.on(event)
            }
        }))
    }
}
