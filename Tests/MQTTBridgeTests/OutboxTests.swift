import ReactiveTesting
import Testing
@testable import MQTTBridge

private func event(_ n: Int) -> OutMessage { OutMessage(topic: "e", payload: Array("\(n)".utf8), kind: .event, qos: 0) }
private func state(_ topic: String, _ v: String) -> OutMessage { OutMessage(topic: topic, payload: Array(v.utf8), kind: .retained, qos: 1) }

@Suite(.ownLiveResources) struct OutboxTests {
    @Test func dropsOldestEventsAndCountsThem() {
        var o = Outbox(eventCapacity: 3)
        for i in 1...5 { o.enqueue(event(i)) }
        #expect(o.droppedEvents == 2)
        #expect(o.queuedEvents == 3)
        let (r, e) = o.drain()
        #expect(r.isEmpty)
        #expect(e.map { String(decoding: $0.payload, as: UTF8.self) } == ["3", "4", "5"])
        #expect(o.queuedEvents == 0 && o.drained == 3)
    }

    @Test func neverDropsStateLatestPerTopicWins() {
        var o = Outbox(eventCapacity: 1)
        o.enqueue(state("a", "1"))
        for i in 1...100 { o.enqueue(event(i)) }
        o.enqueue(state("b", "1"))
        o.enqueue(state("a", "2"))
        o.enqueue(state("c", ""))
        let (r, e) = o.drain()
        #expect(r.map(\.topic) == ["a", "b", "c"])
        #expect(r.map { String(decoding: $0.payload, as: UTF8.self) } == ["2", "1", ""])
        #expect(r.allSatisfy { $0.retain })
        #expect(e.count == 1 && o.droppedEvents == 99)
    }

    @Test func zeroCapacityKeepsNoEvents() {
        var o = Outbox(eventCapacity: 0)
        o.enqueue(event(1))
        #expect(o.droppedEvents == 1 && o.drain().events.isEmpty)
    }

    @Test func ringWrapsAcrossDrains() {
        var o = Outbox(eventCapacity: 4)
        for i in 1...3 { o.enqueue(event(i)) }
        _ = o.drain()
        for i in 4...9 { o.enqueue(event(i)) }
        #expect(o.drain().events.map { String(decoding: $0.payload, as: UTF8.self) } == ["6", "7", "8", "9"])
        #expect(o.droppedEvents == 2)
    }
}

@Suite(.ownLiveResources) struct MinIntervalGateTests {
    @Test func leadingThenOneTrailingPerInterval() {
        var g = MinIntervalGate(interval: 100)
        #expect(g.request(now: 0) == .now)
        #expect(g.request(now: 10) == .at(100))
        #expect(g.request(now: 50) == .pending)
        g.fire(now: 100)
        #expect(g.request(now: 150) == .at(200))
        g.fire(now: 200)
        #expect(g.request(now: 400) == .now)
        g.reset()
        #expect(g.request(now: 401) == .now)
    }
}
