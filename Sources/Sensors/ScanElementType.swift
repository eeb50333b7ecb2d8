/// How one scan element is stored in a buffered IIO device's scans: the
/// `scan_elements/in_<channel>_type` attribute (Documentation/ABI/testing/sysfs-bus-iio),
/// `[be|le]:[s|u]<bits>/<storagebits>[X<repeat>]>><shift>` — e.g. `le:s16/32>>0`,
/// `be:u12/16>>4`, `le:s16/16X3>>0`.
public struct ScanElementType: Hashable, Sendable, CustomStringConvertible {
    /// Byte order of the stored value.
    public enum Endianness: Hashable, Sendable {
        case little, big
    }

    /// Byte order.
    public var endianness: Endianness
    /// Whether the value is two's complement.
    public var isSigned: Bool
    /// Significant bits.
    public var bits: Int
    /// Bits the value occupies in the scan (8, 16, 32 or 64).
    public var storageBits: Int
    /// How many values of this storage size follow one another (`X<n>`; 1 without it).
    public var repeatCount: Int
    /// Right shift applied to the stored value before masking to `bits`.
    public var shift: Int

    /// A type; nil when the combination cannot be stored (bits and shift beyond the storage,
    /// a storage size that is not 8, 16, 32 or 64 bits, a repeat below 1).
    public init?(endianness: Endianness, isSigned: Bool, bits: Int, storageBits: Int, repeatCount: Int = 1, shift: Int = 0) {
        guard [8, 16, 32, 64].contains(storageBits), bits >= 1, shift >= 0, bits + shift <= storageBits,
              repeatCount >= 1, repeatCount <= 1024 else { return nil }
        self.endianness = endianness
        self.isSigned = isSigned
        self.bits = bits
        self.storageBits = storageBits
        self.repeatCount = repeatCount
        self.shift = shift
    }

    /// Parses the kernel's text (a trailing newline allowed); nil when it is not that form.
    public init?(parsing text: String) {
        var s = Substring(text)
        while s.last == "\n" || s.last == " " { s = s.dropLast() }
        let endianness: Endianness
        if s.hasPrefix("le:") { endianness = .little } else if s.hasPrefix("be:") { endianness = .big } else { return nil }
        s = s.dropFirst(3)
        guard let sign = s.first, sign == "s" || sign == "u" else { return nil }
        s = s.dropFirst()
        guard let slash = s.firstIndex(of: "/"), let shiftMark = s.range(of: ">>") else { return nil }
        guard let bits = Int(s[..<slash]) else { return nil }
        let storage = s[s.index(after: slash)..<shiftMark.lowerBound]
        var repeatCount = 1
        let storageBits: Int?
        if let x = storage.firstIndex(of: "X") {
            storageBits = Int(storage[..<x])
            guard let r = Int(storage[storage.index(after: x)...]) else { return nil }
            repeatCount = r
        } else {
            storageBits = Int(storage)
        }
        guard let storageBits, let shift = Int(s[shiftMark.upperBound...]) else { return nil }
        self.init(endianness: endianness, isSigned: sign == "s", bits: bits, storageBits: storageBits,
                  repeatCount: repeatCount, shift: shift)
    }

    /// Bytes of one value.
    public var storageBytes: Int { storageBits / 8 }

    /// Bytes the element takes in a scan (all its repeats): the kernel's
    /// `iio_storage_bytes_for_si`, which is also the alignment it gives the element.
    public var elementBytes: Int { storageBytes * repeatCount }

    /// The `i`th value of the element that starts at `offset` of `scan`: read in its byte
    /// order, shifted, masked to `bits` and, when signed, sign-extended. `scan` must hold the
    /// element (the layout checks).
    public func value(in scan: UnsafeRawBufferPointer, at offset: Int, repeat i: Int = 0) -> Int64 {
        let start = offset + i * storageBytes
        var stored: UInt64 = 0
        for k in 0..<storageBytes {
            let byte = UInt64(scan[start + (endianness == .little ? storageBytes - 1 - k : k)])
            stored = stored << 8 | byte
        }
        stored >>= UInt64(shift)
        if bits < 64 {
            let mask: UInt64 = (1 << UInt64(bits)) - 1
            stored &= mask
            if isSigned && stored & (1 << UInt64(bits - 1)) != 0 { stored |= ~mask }
        }
        return Int64(bitPattern: stored)
    }

    /// The kernel's text form.
    public var description: String {
        "\(endianness == .little ? "le" : "be"):\(isSigned ? "s" : "u")\(bits)/\(storageBits)"
            + (repeatCount > 1 ? "X\(repeatCount)" : "") + ">>\(shift)"
    }
}

extension Substring {
    /// The first occurrence of `needle` (no Foundation here).
    fileprivate func range(of needle: String) -> Range<Index>? {
        let n = Array(needle)
        var i = startIndex
        while i < endIndex {
            if self[i...].starts(with: n) { return i..<index(i, offsetBy: n.count) }
            i = index(after: i)
        }
        return nil
    }
}
