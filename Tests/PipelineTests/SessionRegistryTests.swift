import InputModel
@testable import Pipeline
import Reactive
import ReactiveTesting
import Testing

/// `SessionRegistry`, the registry both hubs keep their sessions and watchers in: its rules
/// on their own, without a hub around them.
@Suite("SessionRegistry: the hubs' sessions and watchers", .ownLiveResources)
struct SessionRegistryTests {
    final class Session {
        let name: String
        init(_ name: String) { self.name = name }
    }

    static let x = DeviceID(rawValue: "x"), y = DeviceID(rawValue: "y")

    @Test("sessions are listed in the order registered; a watcher gets them as .present, then each later one as .added, and announced items too")
    func presentThenAdded() {
        let baseline = LiveResources.owned
        do {
            let registry = SessionRegistry<Session, String>()
            registry.register(Session("first"), as: Self.y, end: {})
            registry.register(Session("second"), as: Self.x, end: {})
            #expect(registry.sessions.map(\.name) == ["first", "second"])
            var seen: [String] = []
            var watcher: Disposable? = registry.watch { "seen " + $0.name }.subscribe(onNext: { update in
                switch update {
                case .present(let items): seen.append("present \(items)")
                case .added(let item): seen.append("added \(item)")
                }
            })
            registry.register(Session("third"), as: DeviceID(rawValue: "z"), end: {})
            registry.announce("no session")
            #expect(seen == [#"present ["seen first", "seen second"]"#, "added seen third", "added no session"])
            watcher?.dispose()
            watcher = nil
            registry.register(Session("fourth"), as: DeviceID(rawValue: "w"), end: {})
            #expect(seen.count == 3, "a disposed watcher hears nothing more")
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("a session registered under a present one's id replaces it: the stale one's end runs once, before the watchers hear of the new one; removing the stale one later leaves the new one")
    func staleReplaced() {
        let baseline = LiveResources.owned
        do {
            let registry = SessionRegistry<Session, String>()
            var log: [String] = []
            let old = Session("old"), new = Session("new")
            registry.register(old, as: Self.x, end: { log.append("old ended") })
            let watcher = registry.watch(\.name).subscribe(onNext: { update in
                if case .added(let item) = update { log.append("added \(item)") }
            })
            registry.register(new, as: Self.x, end: { log.append("new ended") })
            #expect(log == ["old ended", "added new"])
            #expect(registry.count == 1)
            #expect(registry[Self.x] === new)
            registry.remove(old, as: Self.x)   // the stale session's close, run from its end
            #expect(registry[Self.x] === new, "the newer session stays")
            registry.remove(new, as: Self.x)
            #expect(registry.count == 0)
            #expect(log == ["old ended", "added new"], "removal ends nothing: the hub removes a session from its own end")
            watcher.dispose()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("firstWatcher emits once, when the first watcher starts, and at once for a later subscriber")
    func firstWatcher() {
        let baseline = LiveResources.owned
        do {
            let registry = SessionRegistry<Session, String>()
            var early = 0, late = 0
            let e = registry.firstWatcher.subscribe(onNext: { early += 1 })
            #expect(early == 0)
            let a = registry.watch(\.name).subscribe(onNext: { _ in })
            let b = registry.watch(\.name).subscribe(onNext: { _ in })
            #expect(early == 1)
            let l = registry.firstWatcher.subscribe(onNext: { late += 1 })
            #expect(late == 1)
            for d in [e, a, b, l] { d.dispose() }
        }
        #expect(LiveResources.owned == baseline)
    }
}
