import InputModel

/// A raw value to physical units: `(raw + offset) × scale` as the kernel defines `_raw`
/// (Documentation/ABI/testing/sysfs-bus-iio), then × `unitFactor` where evflow's unit differs
/// from the kernel's (temperature and relative humidity come in thousandths).
public struct ChannelConversion: Hashable, Sendable {
    /// The channel's `_scale` (1 without one).
    public var scale: Double
    /// The channel's `_offset` (0 without one).
    public var offset: Double
    /// The kernel's unit to evflow's (`SensorQuantity.unit`).
    public var unitFactor: Double

    /// A conversion.
    public init(scale: Double = 1, offset: Double = 0, unitFactor: Double = 1) {
        self.scale = scale
        self.offset = offset
        self.unitFactor = unitFactor
    }

    /// `raw` in physical units.
    public func physical(_ raw: Double) -> Double { (raw + offset) * scale * unitFactor }

    /// The kernel's unit to evflow's for `quantity`: milli-degrees Celsius and milli-percent
    /// become degrees and percent; the others are the kernel's units already.
    public static func unitFactor(for quantity: SensorQuantity) -> Double {
        switch quantity {
        case .temp, .humidityrelative: 0.001
        default: 1
        }
    }
}

/// Where each enabled scan element sits in one scan of a buffered IIO device, and how to turn
/// a scan into a `SensorSample`.
///
/// The kernel (`iio_compute_scan_bytes`) lays the enabled elements out in `_index` order,
/// each at the next offset aligned to its own size (`elementBytes`: storage bytes × repeat),
/// the timestamp last among them by its index, and pads the scan to a multiple of the
/// largest element. The alignment is the kernel's `ALIGN(x, a)`, `(x + a − 1) & ~(a − 1)`,
/// computed the same way even for a repeat whose size is not a power of two, so the offsets
/// match the kernel's byte for byte.
public struct ScanLayout: Hashable, Sendable {
    /// One enabled element.
    public struct Element: Hashable, Sendable {
        /// The channel's name without `in_` (`accel_x`, `timestamp`).
        public var name: String
        /// Its `_index`: its place in the scan.
        public var index: Int
        /// How it is stored.
        public var type: ScanElementType
        /// Its conversion to physical units (unused for the timestamp).
        public var conversion: ChannelConversion
        /// Its byte offset in the scan (set by the layout).
        public internal(set) var offset: Int = 0

        /// An element before layout.
        public init(name: String, index: Int, type: ScanElementType, conversion: ChannelConversion = .init()) {
            self.name = name
            self.index = index
            self.type = type
            self.conversion = conversion
        }

        /// Whether this is the timestamp channel.
        public var isTimestamp: Bool { name == "timestamp" }
    }

    /// The enabled elements in scan order, offsets set.
    public let elements: [Element]
    /// Bytes per scan, padding included.
    public let scanBytes: Int
    /// Values per sample: every repeat of every element but the timestamp.
    public let valueCount: Int

    /// Lays out `elements` (the enabled ones) as the kernel does; nil when there are none or
    /// two share an index.
    public init?(elements: [Element]) {
        let sorted = elements.sorted { $0.index < $1.index }
        guard !sorted.isEmpty, Set(sorted.map(\.index)).count == sorted.count else { return nil }
        func align(_ x: Int, _ a: Int) -> Int { (x + a - 1) & ~(a - 1) }
        var bytes = 0
        var largest = 0
        var placed: [Element] = []
        for var element in sorted {
            let length = element.type.elementBytes
            bytes = align(bytes, length)
            element.offset = bytes
            bytes += length
            largest = max(largest, length)
            placed.append(element)
        }
        self.elements = placed
        scanBytes = align(bytes, largest)
        valueCount = placed.filter { !$0.isTimestamp }.reduce(0) { $0 + $1.type.repeatCount }
    }

    /// The channel names of the values in a sample, in order (a repeated element's values
    /// are `name_0`, `name_1`, …).
    public var valueNames: [String] {
        elements.filter { !$0.isTimestamp }.flatMap { element in
            element.type.repeatCount == 1 ? [element.name] : (0..<element.type.repeatCount).map { "\(element.name)_\($0)" }
        }
    }

    /// Whether the timestamp channel is enabled.
    public var hasTimestamp: Bool { elements.contains { $0.isTimestamp } }

    /// One scan (`scanBytes` bytes at `scan`'s start) as a sample. Its time is the timestamp
    /// channel's when `useTimestamp` is set and the channel is enabled, else `readTime`.
    public func sample(from scan: UnsafeRawBufferPointer, readTime: Int64, useTimestamp: Bool) -> SensorSample {
        precondition(scan.count >= scanBytes, "a scan is \(scanBytes) bytes")
        var values: [Double] = []
        values.reserveCapacity(valueCount)
        var time = readTime
        for element in elements {
            if element.isTimestamp {
                if useTimestamp { time = element.type.value(in: scan, at: element.offset) }
                continue
            }
            for i in 0..<element.type.repeatCount {
                values.append(element.conversion.physical(Double(element.type.value(in: scan, at: element.offset, repeat: i))))
            }
        }
        return SensorSample(time: time, values: values)
    }

    /// Every whole scan in `bytes` as samples, and how many bytes they used (a partial scan
    /// at the end is left for the next read).
    public func samples(from bytes: UnsafeRawBufferPointer, readTime: Int64, useTimestamp: Bool) -> (samples: [SensorSample], consumed: Int) {
        var result: [SensorSample] = []
        var at = 0
        while bytes.count - at >= scanBytes {
            result.append(sample(from: UnsafeRawBufferPointer(rebasing: bytes[at..<(at + scanBytes)]),
                                 readTime: readTime, useTimestamp: useTimestamp))
            at += scanBytes
        }
        return (result, at)
    }
}
