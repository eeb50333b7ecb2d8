/// The input loop's fd handlers, found from an epoll event's token by indexing, not hashing.
///
/// A token is `serial << 24 | slot`: `slot` indexes `slots`, and `serial` (one more for every
/// registration, never reused) makes a token that was unregistered miss even when its slot
/// holds a newer handler — an epoll batch can still carry the old token after an earlier
/// handler of the same turn unregistered it. A freed slot is reused by the next registration,
/// so the table is as long as the most handlers ever registered at once.
///
/// Why not a dictionary: the lookup runs once per readable fd per wake-up, on the way from a
/// device's event to its twin; hashing the token cost ~350 instructions of U1's frame
/// (docs/benchmarks.md, "U1"), an index and a compare cost a few.
struct HandlerTable<Handler> {
    typealias Token = UInt64

    private var slots: [(token: Token, handler: Handler?)] = []
    private var free: [Int] = []
    private var nextSerial: UInt64 = 1
    /// Handlers registered.
    private(set) var count = 0

    private static var slotBits: UInt64 { 24 }
    private static var slotMask: UInt64 { (1 << slotBits) - 1 }
    /// Tokens below this are never handed out (the loop's own wake and timer tokens).
    static var firstToken: Token { 1 << slotBits }

    /// Stores `handler`; returns its token.
    mutating func insert(_ handler: Handler) -> Token {
        let slot: Int
        if let reused = free.popLast() {
            slot = reused
        } else {
            slot = slots.count
            precondition(UInt64(slot) <= Self.slotMask, "more than 2^24 fd handlers at once")
            slots.append((0, nil))
        }
        let token = nextSerial << Self.slotBits | UInt64(slot)
        nextSerial += 1
        slots[slot] = (token, handler)
        count += 1
        return token
    }

    /// The handler registered as `token`, if it still is.
    subscript(token: Token) -> Handler? {
        let slot = Int(truncatingIfNeeded: token & Self.slotMask)
        guard slot < slots.count, slots[slot].token == token else { return nil }
        return slots[slot].handler
    }

    /// Removes the handler registered as `token`; returns whether it was.
    @discardableResult
    mutating func remove(_ token: Token) -> Bool {
        let slot = Int(truncatingIfNeeded: token & Self.slotMask)
        guard slot < slots.count, slots[slot].token == token else { return false }
        slots[slot] = (0, nil)
        free.append(slot)
        count -= 1
        return true
    }

    /// Removes every handler (the loop's end).
    mutating func removeAll() {
        slots = []
        free = []
        count = 0
    }
}
