@testable import DeviceIO
import Testing

@Suite("the input loop's handler table")
struct HandlerTableTests {
    @Test("a token finds its handler until removed; a removed token misses even after its slot holds a newer handler (an epoll batch can still carry it)")
    func staleTokenMissesAfterReuse() {
        var table = HandlerTable<String>()
        let a = table.insert("a")
        let b = table.insert("b")
        #expect(table[a] == "a" && table[b] == "b" && table.count == 2)
        let removedOnce = table.remove(a)
        let removedTwice = table.remove(a)
        #expect(removedOnce && !removedTwice)
        let c = table.insert("c")                     // reuses a's slot
        #expect(c != a)
        #expect(table[a] == nil)
        #expect(table[c] == "c" && table[b] == "b" && table.count == 2)
    }

    @Test("tokens are never below firstToken (the loop's wake and timer tokens) and never repeat")
    func tokensAreUniqueAndAboveTheLoopsOwn() {
        var table = HandlerTable<Int>()
        var seen = Set<UInt64>()
        var live: [UInt64] = []
        var rng = SystemRandomNumberGenerator()
        for i in 0..<2_000 {
            if !live.isEmpty, Bool.random(using: &rng) {
                let t = live.remove(at: Int.random(in: 0..<live.count, using: &rng))
                let removed = table.remove(t)
                #expect(removed)
            } else {
                let t = table.insert(i)
                #expect(t >= HandlerTable<Int>.firstToken)
                #expect(seen.insert(t).inserted)
                live.append(t)
            }
            #expect(table.count == live.count)
        }
        for t in live { #expect(table[t] != nil) }
    }

    @Test("an unknown token, or one past the table's end, misses")
    func unknownTokens() {
        var table = HandlerTable<Int>()
        _ = table.insert(1)
        #expect(table[0] == nil && table[1] == nil && table[2] == nil)
        #expect(table[HandlerTable<Int>.firstToken | 5] == nil)
        #expect(table[UInt64.max] == nil)
        table.removeAll()
        #expect(table.count == 0)
    }
}
