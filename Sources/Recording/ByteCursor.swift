#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// ASCII bytes the scanners compare against.
enum ASCII {
    static let newline: UInt8 = 0x0A
    static let carriageReturn: UInt8 = 0x0D
    static let space: UInt8 = 0x20
    static let tab: UInt8 = 0x09
    static let hash: UInt8 = 0x23
    static let colon: UInt8 = 0x3A
    static let dot: UInt8 = 0x2E
    static let minus: UInt8 = 0x2D
    static let plus: UInt8 = 0x2B
    static let zero: UInt8 = 0x30
}

/// A forward-only reader over the bytes of a line-oriented text file.
///
/// The whole file is one buffer; `p` moves through it and a line ends at `\n`, at a `#`
/// comment or at the end of the buffer, so fields are read in place without first cutting the
/// file into lines (that would allocate per line, which the 2M events/s budget cannot pay).
/// `\r` counts as a blank so CRLF files read the same. Errors carry the file and line.
struct ByteCursor {
    var p: UnsafePointer<UInt8>
    let end: UnsafePointer<UInt8>
    /// 1-based number of the line `p` is in (0 before the first line starts).
    var line: Int
    let file: String

    init(_ buffer: UnsafeBufferPointer<UInt8>, file: String) {
        // An empty buffer has no base address; point at a static byte so `p == end` holds.
        let base = buffer.baseAddress ?? ByteCursor.emptyByte
        p = base
        end = base + buffer.count
        line = 0
        self.file = file
    }

    nonisolated(unsafe) private static let emptyByte: UnsafePointer<UInt8> = {
        let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
        pointer.initialize(to: 0)
        return UnsafePointer(pointer)
    }()

    @inline(__always) var atEnd: Bool { p >= end }

    /// Whether the current line has no more fields (newline, comment or end of file).
    @inline(__always) var atLineEnd: Bool {
        p >= end || p.pointee == ASCII.newline || p.pointee == ASCII.hash
    }

    /// Whether `p` is just after a complete field.
    @inline(__always) var atFieldEnd: Bool {
        if p >= end { return true }
        let c = p.pointee
        return c == ASCII.space || c == ASCII.tab || c == ASCII.newline || c == ASCII.hash
            || c == ASCII.carriageReturn
    }

    @inline(__always) mutating func skipBlanks() {
        while p < end {
            let c = p.pointee
            guard c == ASCII.space || c == ASCII.tab || c == ASCII.carriageReturn else { return }
            p += 1
        }
    }

    /// Moves to the first byte of the next line (or the end).
    @inline(__always) mutating func skipToNextLine() {
        guard p < end else { return }
        if p.pointee == ASCII.newline { p += 1; return }
        if let newline = memchr(p, Int32(ASCII.newline), end - p) {
            p = UnsafePointer(newline.assumingMemoryBound(to: UInt8.self)) + 1
        } else {
            p = end
        }
    }

    /// Moves past the line at `p` when it holds only blanks and a comment (or nothing), the
    /// lines every reader skips; says whether it did. `p` must be at the start of a line.
    @inline(__always) mutating func skipBlankOrCommentLine() -> Bool {
        var probe = self
        probe.skipBlanks()
        guard probe.atLineEnd else { return false }
        self = probe
        skipToNextLine()
        return true
    }

    /// The bytes from `p` to the end of the line (comments included), trimmed of blanks.
    mutating func restOfLine() -> String {
        skipBlanks()
        let start = p
        if let newline = memchr(p, Int32(ASCII.newline), end - p) {
            p = UnsafePointer(newline.assumingMemoryBound(to: UInt8.self))
        } else {
            p = end
        }
        var last = p
        while last > start, [ASCII.space, ASCII.tab, ASCII.carriageReturn].contains((last - 1).pointee) {
            last -= 1
        }
        return String(decoding: UnsafeBufferPointer(start: start, count: last - start), as: UTF8.self)
    }

    /// Whether the line at `p` starts with `prefix`.
    func startsWith(_ prefix: String) -> Bool {
        var q = p
        for byte in prefix.utf8 {
            guard q < end, q.pointee == byte else { return false }
            q += 1
        }
        return true
    }

    /// The field starting at `start`, for error messages (at most 40 bytes).
    func token(from start: UnsafePointer<UInt8>) -> String {
        var q = start
        while q < end, q - start < 40 {
            let c = q.pointee
            if c == ASCII.space || c == ASCII.tab || c == ASCII.newline || c == ASCII.hash
                || c == ASCII.carriageReturn { break }
            q += 1
        }
        return String(decoding: UnsafeBufferPointer(start: start, count: q - start), as: UTF8.self)
    }

    @inline(never)
    func error(_ reason: RecordingError.Reason) -> RecordingError {
        RecordingError(file: file, line: line, reason: reason)
    }

    /// Reads a hexadecimal field (no `0x`) of at most `max`.
    @inline(__always)
    mutating func hex(_ field: String, max: UInt32) throws(RecordingError) -> UInt32 {
        skipBlanks()
        let start = p
        var value: UInt32 = 0
        var digits = 0
        while p < end {
            let c = p.pointee
            var d = c &- ASCII.zero
            if d >= 10 {
                d = (c | 0x20) &- 0x61   // 'a'...'f' in either case
                guard d < 6 else { break }
                d &+= 10
            }
            digits += 1
            guard digits <= 8 else { throw error(.badHex(field: field, text: token(from: start))) }
            value = value << 4 | UInt32(d)
            p += 1
        }
        if digits == 0 {
            if atLineEnd { throw error(.truncatedLine(expected: field)) }
            throw error(.badHex(field: field, text: token(from: start)))
        }
        guard atFieldEnd, value <= max else {
            throw error(.badHex(field: field, text: token(from: start)))
        }
        return value
    }

    /// Reads an optionally signed decimal field that fits `Int32`.
    @inline(__always)
    mutating func int32(_ field: String) throws(RecordingError) -> Int32 {
        skipBlanks()
        let start = p
        var negative = false
        if p < end, p.pointee == ASCII.minus || p.pointee == ASCII.plus {
            negative = p.pointee == ASCII.minus
            p += 1
        }
        var value: Int64 = 0
        let digits = decimalDigits(into: &value)
        guard digits <= 18 else { throw error(.badNumber(field: field, text: token(from: start))) }
        if digits == 0 {
            if p == start, atLineEnd { throw error(.truncatedLine(expected: field)) }
            throw error(.badNumber(field: field, text: token(from: start)))
        }
        if negative { value = -value }
        guard atFieldEnd, value >= Int64(Int32.min), value <= Int64(Int32.max) else {
            throw error(.badNumber(field: field, text: token(from: start)))
        }
        return Int32(truncatingIfNeeded: value)
    }

    /// Reads an evemu timestamp `sec.usec` (exactly six fraction digits) as microseconds.
    @inline(__always)
    mutating func timestamp() throws(RecordingError) -> Int64 {
        skipBlanks()
        let start = p
        var seconds: Int64 = 0
        let digits = decimalDigits(into: &seconds)
        if digits == 0, atLineEnd { throw error(.truncatedLine(expected: "timestamp")) }
        // 12 digits of seconds is 31,000 years: enough, and keeps µs far from overflow.
        guard digits > 0, digits <= 12, p < end, p.pointee == ASCII.dot else {
            throw error(.badNumber(field: "timestamp", text: token(from: start)))
        }
        p += 1
        var micros: Int64 = 0
        let fraction = decimalDigits(into: &micros)
        guard fraction == 6, atFieldEnd else {
            throw error(.badNumber(field: "timestamp", text: token(from: start)))
        }
        return seconds &* 1_000_000 &+ micros
    }

    /// Reads the decimal digits at the cursor into `value` (wrapping: the callers bound the
    /// count they accept) and returns how many there were.
    @inline(__always)
    mutating func decimalDigits(into value: inout Int64) -> Int {
        var digits = 0
        while p < end {
            let d = p.pointee &- ASCII.zero
            guard d < 10 else { break }
            digits += 1
            value = value &* 10 &+ Int64(d)
            p += 1
        }
        return digits
    }

    /// Requires the rest of the line to be blank or a comment.
    @inline(__always)
    mutating func finishLine() throws(RecordingError) {
        skipBlanks()
        guard atLineEnd else { throw error(.trailingText(token(from: p))) }
        skipToNextLine()
    }
}

/// Number of `\n` bytes in `buffer` (an upper bound on its lines minus one).
func countNewlines(_ buffer: UnsafeBufferPointer<UInt8>) -> Int {
    guard var p = buffer.baseAddress else { return 0 }
    let end = p + buffer.count
    var count = 0
    while p < end, let hit = memchr(p, Int32(ASCII.newline), end - p) {
        count += 1
        p = UnsafePointer(hit.assumingMemoryBound(to: UInt8.self)) + 1
    }
    return count
}
