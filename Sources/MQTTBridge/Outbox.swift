/// One message to publish.
public struct OutMessage: Hashable, Sendable {
    /// What kind of message it is, which decides its QoS and what the outbox may drop.
    public enum Kind: Hashable, Sendable {
        /// Retained documents: descriptions, states, availability, discovery, and the empty
        /// retained messages that clear them. Never dropped.
        case retained
        /// Event stream messages. Dropped oldest first when the outbox is full.
        case event
    }
    public var topic: String
    public var payload: [UInt8]
    public var kind: Kind
    public var qos: Int32
    public var retain: Bool { kind == .retained }

    public init(topic: String, payload: [UInt8], kind: Kind, qos: Int32) {
        self.topic = topic
        self.payload = payload
        self.kind = kind
        self.qos = qos
    }
}

/// What the bridge keeps while the broker is away (docs/mqtt.md, "Robustness").
///
/// Retained messages are kept per topic, the latest winning, so they are bounded by the number
/// of topics and never dropped. Event messages go to a ring of `eventCapacity`; when it is full
/// the oldest is dropped and counted.
public struct Outbox: Sendable {
    /// The most event messages kept.
    public let eventCapacity: Int
    private var retained: [String: OutMessage] = [:]
    private var retainedOrder: [String] = []
    private var ring: [OutMessage?]
    private var head = 0
    private var count = 0
    /// Event messages dropped (oldest first) because the ring was full, since start.
    public private(set) var droppedEvents: UInt64 = 0
    /// Messages taken out by `drain`, since start.
    public private(set) var drained: UInt64 = 0

    /// An empty outbox; `eventCapacity` 0 keeps no events (each is counted as dropped).
    public init(eventCapacity: Int) {
        self.eventCapacity = max(0, eventCapacity)
        ring = Array(repeating: nil, count: max(0, eventCapacity))
    }

    /// Event messages waiting.
    public var queuedEvents: Int { count }
    /// Retained messages waiting (one per topic).
    public var queuedRetained: Int { retained.count }

    /// Keeps a message until `drain`.
    public mutating func enqueue(_ m: OutMessage) {
        switch m.kind {
        case .retained:
            if retained.updateValue(m, forKey: m.topic) == nil { retainedOrder.append(m.topic) }
        case .event:
            guard eventCapacity > 0 else { droppedEvents += 1; return }
            if count == eventCapacity {
                ring[head] = nil
                head = (head + 1) % eventCapacity
                count -= 1
                droppedEvents += 1
            }
            ring[(head + count) % eventCapacity] = m
            count += 1
        }
    }

    /// Everything waiting, and empties the outbox: retained messages in the order their
    /// topics were first queued, then events oldest first.
    public mutating func drain() -> (retained: [OutMessage], events: [OutMessage]) {
        let r = retainedOrder.map { retained[$0]! }
        var e: [OutMessage] = []
        e.reserveCapacity(count)
        for i in 0..<count { e.append(ring[(head + i) % eventCapacity]!) }
        for i in 0..<ring.count { ring[i] = nil }
        retained = [:]
        retainedOrder = []
        head = 0
        count = 0
        drained += UInt64(r.count + e.count)
        return (r, e)
    }
}

/// Publishes at most once per `interval` (nanoseconds), first change at once (leading edge),
/// later changes within the interval coalesced into one publication at its end (trailing edge).
/// A pure state machine: the bridge arms a timer when `request` says so.
public struct MinIntervalGate: Hashable, Sendable {
    public enum Action: Hashable, Sendable {
        /// Publish now.
        case now
        /// Arm a timer for this time, then call `fire`.
        case at(Int64)
        /// A publication is already scheduled; nothing to do.
        case pending
    }
    public let interval: Int64
    private var last: Int64?
    private var scheduled: Int64?

    public init(interval: Int64) { self.interval = max(0, interval) }

    /// A change at `now`.
    public mutating func request(now: Int64) -> Action {
        if scheduled != nil { return .pending }
        if let last, now - last < interval {
            scheduled = last + interval
            return .at(last + interval)
        }
        last = now
        return .now
    }

    /// The timer armed by `.at` fired at `now`: publish.
    public mutating func fire(now: Int64) {
        scheduled = nil
        last = now
    }

    /// Forgets the last publication (after a reconnect everything is published afresh).
    public mutating func reset() {
        last = nil
        scheduled = nil
    }
}
