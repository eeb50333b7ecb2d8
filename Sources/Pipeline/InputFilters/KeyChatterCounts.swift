/// The chatter filter's drops per key (`key_chatter` split by code): what shows a switch that
/// wears out (docs/mqtt.md, "Wear"), one key among many.
///
/// Fixed storage, no allocation: `capacity` entries, each one word (`code + 1` in the top 16
/// bits, the count in the lower 48). The first `capacity` keys that chatter get an entry; drops
/// of a key that finds the table full are counted in `key_chatter` only (`overflow` says how
/// many). A device's counters are copied to the state store on every frame, so the table is
/// trivially copyable (no reference to retain) and empty in the common case.
public struct KeyChatterCounts: Sendable {
    /// How many keys get their own count.
    public static let capacity = 16
    static let countMask: UInt64 = (1 << 48) - 1

    var words = InlineArray<16, UInt64>(repeating: 0)
    /// Drops of keys that found the table full.
    public internal(set) var overflow: UInt64 = 0

    /// No counts.
    public init() {}

    /// Whether no key has a count (the state store skips writing the table then).
    @inline(__always)
    public var isEmpty: Bool { words[0] == 0 }

    /// Adds `n` drops of key `code`.
    public mutating func add(_ code: UInt16, _ n: UInt64) {
        guard n > 0 else { return }
        let tag = UInt64(code) &+ 1
        for i in 0..<Self.capacity {
            let w = words[i]
            if w == 0 {
                words[i] = tag << 48 | min(n, Self.countMask)
                return
            }
            if w >> 48 == tag {
                words[i] = tag << 48 | min((w & Self.countMask) &+ n, Self.countMask)
                return
            }
        }
        overflow &+= n
    }

    /// The counts, by key code.
    public var byCode: [UInt16: UInt64] {
        var out: [UInt16: UInt64] = [:]
        for i in 0..<Self.capacity {
            let w = words[i]
            if w == 0 { break }
            out[UInt16(truncatingIfNeeded: (w >> 48) &- 1)] = w & Self.countMask
        }
        return out
    }

    /// The raw entries (the state store's words).
    func word(_ i: Int) -> UInt64 { words[i] }

    /// Counts from the state store's words.
    init(words raw: some Collection<UInt64>, overflow: UInt64) {
        for (i, w) in raw.prefix(Self.capacity).enumerated() { words[i] = w }
        self.overflow = overflow
    }
}

extension KeyChatterCounts: Hashable {
    public static func == (a: Self, b: Self) -> Bool {
        guard a.overflow == b.overflow else { return false }
        for i in 0..<capacity where a.words[i] != b.words[i] { return false }
        return true
    }

    public func hash(into h: inout Hasher) {
        for i in 0..<Self.capacity { h.combine(words[i]) }
        h.combine(overflow)
    }
}

extension KeyChatterCounts: Codable {
    private enum CodingKeys: String, CodingKey { case words, overflow }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.init(words: try c.decode([UInt64].self, forKey: .words), overflow: try c.decode(UInt64.self, forKey: .overflow))
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode((0..<Self.capacity).map { words[$0] }, forKey: .words)
        try c.encode(overflow, forKey: .overflow)
    }
}
