/// Splits the bytes a client sends into request lines, enforcing the line-length limit.
///
/// Feed it whatever arrives (a NIO `ByteBuffer`'s readable bytes, a `read(2)` buffer) with
/// `append`, then take items with `next()` until it returns nil. A line longer than
/// `maxLineLength` is reported once, as `.overlong`, as soon as the limit is crossed — the
/// framer does not wait for the line's end — and the rest of it up to the next `\n` is
/// discarded without being stored, so a client can never make the server hold more than
/// `maxLineLength + 1` bytes of an unfinished line. The terminator (`\n`, and a `\r` right
/// before it) is not part of a line. Items come out in the order their lines were sent.
public struct LineFramer: Sendable {
    /// One item taken from the framer.
    public enum Item: Hashable, Sendable {
        /// A complete line without its terminator (may be empty).
        case line(ArraySlice<UInt8>)
        /// A line went over the limit; the rest of it is discarded.
        case overlong
    }

    /// Longest line accepted, in bytes, without the terminator.
    public let maxLineLength: Int
    /// The unfinished line received so far.
    private var partial: [UInt8] = []
    /// Items ready for `next()`, from `head` on.
    private var ready: [Item] = []
    private var head = 0
    /// True while discarding the remainder of an over-long line.
    public private(set) var isDiscarding = false

    /// Creates a framer with the protocol's limit by default.
    public init(maxLineLength: Int = ProtocolConstants.maxRequestLineLength) {
        precondition(maxLineLength > 0, "maxLineLength must be positive")
        self.maxLineLength = maxLineLength
    }

    /// Bytes of an unfinished line held right now (at most `maxLineLength + 1`).
    public var bufferedByteCount: Int { partial.count }

    /// Whether items are waiting for `next()`.
    public var hasItems: Bool { head < ready.count }

    /// Adds received bytes.
    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        append(contentsOf: bytes)
    }

    /// Adds received bytes.
    public mutating func append<Bytes: Collection>(contentsOf bytes: Bytes) where Bytes.Element == UInt8 {
        let newline = UInt8(ascii: "\n")
        var rest = bytes[...]
        while !rest.isEmpty {
            let nl = rest.firstIndex(of: newline)
            let segment = rest[..<(nl ?? rest.endIndex)]
            rest = rest[(nl.map { rest.index(after: $0) } ?? rest.endIndex)...]
            if isDiscarding {
                if nl != nil { isDiscarding = false }
                continue
            }
            // `maxLineLength + 1` bytes may still be legal while the last one is a "\r" that
            // turns out to precede "\n"; anything beyond that is too long whatever follows.
            if partial.count + segment.count > maxLineLength + 1 {
                overflow(lineEnded: nl != nil)
                continue
            }
            partial.append(contentsOf: segment)
            if nl != nil {
                var line = partial[...]
                if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
                ready.append(line.count > maxLineLength ? .overlong : .line(line))
                partial = []   // the slice keeps the old storage; the next line gets its own
            } else if partial.count == maxLineLength + 1 && partial.last != UInt8(ascii: "\r") {
                overflow(lineEnded: false)   // no "\r\n" can rescue it: report it now
            }
        }
    }

    /// Reports an over-long line and, unless its newline was already seen, discards to it.
    private mutating func overflow(lineEnded: Bool) {
        ready.append(.overlong)
        partial.removeAll(keepingCapacity: true)
        isDiscarding = !lineEnded
    }

    /// The next complete line or over-long notice, or nil when more bytes are needed.
    public mutating func next() -> Item? {
        guard head < ready.count else { return nil }
        let item = ready[head]
        head += 1
        if head == ready.count {
            ready.removeAll(keepingCapacity: true)
            head = 0
        }
        return item
    }
}
