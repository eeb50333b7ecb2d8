import InputModel
@testable import Pipeline
import Testing

/// The chatter filter's drops per key (issue #31: a switch wearing out shows up in Home
/// Assistant as its own diagnostic sensor): counted beside `key_chatter`, summing to it while
/// no more than `KeyChatterCounts.capacity` keys chattered, carried through the state store.
@Suite("KeyChatterCounts", .ownLiveResources) struct KeyChatterCountsTests {
    @Test("two bouncing keys: each key's drops, summing to key_chatter's")
    func perKeySumsToTheFilterTotal() {
        // (spurious off: the bounce method alone, whose drops are each swallowed edge)
        var s = settings(EventType.key, C.KEY_A, .chatter(window: 15 * ms, spurious: .off))
        s.keys[C.KEY_B] = .chatter(window: 15 * ms, spurious: .off)
        // KEY_A: one bounce at its press (0@3 1@6 swallowed); KEY_B: bounces at press and release.
        let input = (keyFrames("1@0 0@3 1@6 0@100") + keyFrames("1@200 0@202 1@204 0@300 1@302 0@304", code: C.KEY_B))
            .sorted { $0.time < $1.time }
        let run = runFilter(s, input)
        #expect(run.values(EventType.key, C.KEY_A) == "1@0 0@100")
        #expect(run.counters.chatterByKey.byCode == [C.KEY_A: 2, C.KEY_B: 4])
        #expect(run.counters[.keyChatter].dropped == 6)
        #expect(run.counters.chatterByKey.overflow == 0)
    }

    @Test("a key that never bounced has no entry; a device without chatter has an empty table")
    func noChatterNoEntry() {
        let run = runFilter(settings(EventType.key, C.KEY_A, .chatter(window: 15 * ms)), keyFrames("1@0 0@100 1@300 0@400"))
        #expect(run.counters.chatterByKey.isEmpty)
        #expect(run.counters.chatterByKey.byCode == [:])
    }

    @Test("past the capacity, a new key's drops go to overflow; the first keys keep counting")
    func overflow() {
        var t = KeyChatterCounts()
        for code in 0..<UInt16(KeyChatterCounts.capacity) { t.add(code + 1, 1) }
        t.add(500, 3)
        t.add(1, 2)
        t.add(0, 0)   // nothing dropped: no entry
        #expect(t.byCode.count == KeyChatterCounts.capacity)
        #expect(t.byCode[1] == 3 && t.byCode[500] == nil)
        #expect(t.overflow == 3)
    }

    @Test("KEY_RESERVED (code 0) is a key like another: its entry is not the empty word")
    func codeZero() {
        var t = KeyChatterCounts()
        t.add(0, 5)
        t.add(7, 1)
        #expect(t.byCode == [0: 5, 7: 1])
    }

    @Test("the state store carries the table: a snapshot reads back each key's count and the overflow")
    func throughTheStateStore() throws {
        let store = StateStore()
        let info = device(name: "pad", classes: [.key], capabilities: [EventType.key: [C.KEY_A, C.KEY_B]])
        let slot = store.add(info)
        var counters = DeviceCounters()
        counters.chatterByKey.add(C.KEY_A, 2)
        counters.chatterByKey.add(C.KEY_B, 9)
        counters.chatterByKey.overflow = 4
        slot.write { $0.setCounters(counters) }
        let state = try #require(store.state(of: info.id))
        #expect(state.counters.chatterByKey.byCode == [C.KEY_A: 2, C.KEY_B: 9])
        #expect(state.counters.chatterByKey == counters.chatterByKey)
    }
}
