import DeviceStreams
import InputModel
import Reactive

/// What a hub's watchers get (`DeviceHub.streams(raw:)`, `SensorHub.feeds()`).
public enum HubUpdate<Item: Sendable>: Sendable {
    /// First, once: the items present when the watcher started, in the order they came.
    case present([Item])
    /// Then each item as it comes.
    case added(Item)
}

/// The sessions of a hub and the watchers of them: the one registry `DeviceHub` and
/// `SensorHub` share, so what a session's life means to the others — present, added,
/// replaced — is written once (the two hubs' copies had drifted apart: issue #35).
///
/// - A session is registered when its inner sequence in the hub's `run` merge starts, with
///   the way to complete that sequence (`end`), and listed in the order registered until the
///   hub removes it — from the one close path it has, run when the sequence ends or is disposed.
/// - A session registered under the id of a present one replaces it: the stale session's
///   inner sequence is completed, so the merge disposes it and the hub closes it through that
///   same path at once, not when the hub stops (issue #25 on devices; the sensors' copy left
///   the stale sequence running, issue #35). The device hub gives each present device an id of
///   its own, so only sensors are replaced today.
/// - `watch` gives a watcher `.present` with the sessions registered now, then `.added` for
///   each one registered (or `announce`d) later: the snapshot and the later ones neither
///   overlap nor leave a gap (both are decided under the lock), and delivery is serial (a
///   merge), so any thread may watch; disposal removes the watcher.
///
/// Shared with the server's threads: one short critical section when a session comes or goes
/// or a watcher starts — never per frame or sample — and nothing is called under it; the
/// watchers and a stale session's end are called after it. `register` and `remove` run on the
/// hub's scheduler, the single writer of the sessions.
final class SessionRegistry<Session: AnyObject, Item: Sendable>: @unchecked Sendable {
    private struct Entry {
        let session: Session
        let sequence: Int
        /// Completes the session's inner sequence in the hub's `run` merge.
        let end: () -> Void
    }

    /// A subscriber of `watch`: how it sees a session, and its subject (subscribed by the
    /// watcher's merge before it is registered).
    private struct Watcher {
        let view: (Session) -> Item
        let observer: PublishSubject<HubUpdate<Item>>
    }

    private struct State {
        var entries: [DeviceID: Entry] = [:]
        var watchers: [UInt64: Watcher] = [:]
        var nextWatcher: UInt64 = 0
        var nextSequence = 0
        /// Whether a watcher ever started.
        var watched = false
    }

    private let state = PosixLocked(State())
    /// `true` once the first watcher has started: sent once, by the thread that registered it.
    private let watchedSubject = BehaviorSubject<Bool>(value: false)

    init() {}

    /// The registered sessions, in the order they were registered.
    var sessions: [Session] {
        state.withLock { $0.entries.values.sorted { $0.sequence < $1.sequence } }.map(\.session)
    }

    /// The number of registered sessions.
    var count: Int { state.withLock { $0.entries.count } }

    /// The ids of the registered sessions.
    var ids: Set<DeviceID> { state.withLock { Set($0.entries.keys) } }

    /// The session registered under `id`.
    subscript(id: DeviceID) -> Session? { state.withLock { $0.entries[id]?.session } }

    /// Registers `session` under `id` and tells the watchers (`.added`); `end` completes the
    /// session's inner sequence in the hub's `run` merge. A session present under `id` is
    /// stale: its sequence is ended first (the hub closes it from there), then the watchers
    /// hear of the new one.
    func register(_ session: Session, as id: DeviceID, end: @escaping () -> Void) {
        let (stale, watchers) = state.withLock { s -> (Entry?, [Watcher]) in
            s.nextSequence += 1
            let stale = s.entries.updateValue(Entry(session: session, sequence: s.nextSequence, end: end), forKey: id)
            return (stale, Array(s.watchers.values))
        }
        stale?.end()
        for watcher in watchers { watcher.observer.onNext(.added(watcher.view(session))) }
    }

    /// Removes `session` from under `id`, unless a newer session replaced it there.
    func remove(_ session: Session, as id: DeviceID) {
        let entry = state.withLock { s -> Entry? in
            guard s.entries[id]?.session === session else { return nil }
            return s.entries.removeValue(forKey: id)
        }
        _ = entry   // released here, outside the lock: its `end` holds the inner sequence's observer
    }

    /// Tells every watcher of an item that is no session (an inaccessible device).
    func announce(_ item: Item) {
        for watcher in state.withLock({ Array($0.watchers.values) }) { watcher.observer.onNext(.added(item)) }
    }

    /// The registered sessions for a watcher, each seen through `view`: first `.present`, then
    /// `.added` (see the type's notes).
    func watch(_ view: @escaping (Session) -> Item) -> Observable<HubUpdate<Item>> {
        Observable<HubUpdate<Item>>.deferred { [weak self] in
            guard let self else { return .empty() }
            let later = PublishSubject<HubUpdate<Item>>()   // subscribed by the merge before it is registered
            let registration = Observable<HubUpdate<Item>>.create { [weak self] observer in
                guard let self else {
                    observer.onCompleted()
                    return Disposables.create()
                }
                let (id, present, first) = state.withLock { s -> (UInt64, [Session], Bool) in
                    s.nextWatcher += 1
                    s.watchers[s.nextWatcher] = Watcher(view: view, observer: later)
                    defer { s.watched = true }
                    return (s.nextWatcher, s.entries.values.sorted { $0.sequence < $1.sequence }.map(\.session), !s.watched)
                }
                observer.onNext(.present(present.map(view)))
                if first { watchedSubject.onNext(true) }
                return Disposables.create { [weak self] in
                    _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) }
                }
            }
            return Observable.merge([later.asObservable(), registration])
        }
    }

    /// Emits once when the first watcher starts, on its thread and in the middle of its
    /// subscription; at once for a later subscriber.
    var firstWatcher: Observable<Void> { watchedSubject.filter { $0 }.take(1).map { _ in () } }
}
