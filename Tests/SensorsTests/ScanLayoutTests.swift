import InputModel
@testable import Sensors
import Testing

@Suite("Scan element types")
struct ScanElementTypeTests {
    @Test("the kernel's forms parse, and print back the same")
    func parsing() throws {
        let t = try #require(ScanElementType(parsing: "le:s16/32>>0\n"))
        #expect(t == ScanElementType(endianness: .little, isSigned: true, bits: 16, storageBits: 32))
        let u = try #require(ScanElementType(parsing: "be:u12/16>>4"))
        #expect(u.endianness == .big && !u.isSigned && u.bits == 12 && u.storageBits == 16 && u.shift == 4)
        let r = try #require(ScanElementType(parsing: "le:s16/16X3>>0"))
        #expect(r.repeatCount == 3 && r.elementBytes == 6)
        for text in ["le:s16/32>>0", "be:u12/16>>4", "le:s16/16X3>>0", "le:s64/64>>0"] {
            #expect(ScanElementType(parsing: text)?.description == text)
        }
    }

    @Test("malformed or impossible types are refused", arguments: [
        "", "xx:s16/16>>0", "le:x16/16>>0", "le:s16/24>>0", "le:s17/16>>0", "le:s12/16>>8",
        "le:s16/16", "le:s16/16X0>>0", "le:s/16>>0", "le:s16/16>>-1",
    ])
    func refused(_ text: String) {
        #expect(ScanElementType(parsing: text) == nil)
    }

    @Test("values are read in their byte order, shifted, masked and sign-extended")
    func values() throws {
        let bytes: [UInt8] = [0xF0, 0xFF, 0xFF, 0xFF]
        let le16 = try #require(ScanElementType(parsing: "le:s16/16>>0"))
        let be16 = try #require(ScanElementType(parsing: "be:s16/16>>0"))
        let be12 = try #require(ScanElementType(parsing: "be:s12/16>>4"))
        let beu12 = try #require(ScanElementType(parsing: "be:u12/16>>4"))
        let le32 = try #require(ScanElementType(parsing: "le:s16/32>>0"))
        let leu8 = try #require(ScanElementType(parsing: "le:u8/8>>0"))
        bytes.withUnsafeBytes { scan in
            #expect(le16.value(in: scan, at: 0) == -16)         // 0xFFF0
            #expect(be16.value(in: scan, at: 0) == -3841)       // 0xF0FF
            #expect(be12.value(in: scan, at: 0) == -241)        // 0xF0FF >> 4 = 0xF0F, 12-bit signed
            #expect(beu12.value(in: scan, at: 0) == 0xF0F)
            #expect(le32.value(in: scan, at: 0) == -16)         // low 16 bits of 0xFFFFFFF0
            #expect(leu8.value(in: scan, at: 0) == 0xF0)
        }
        let positive: [UInt8] = [0x34, 0x12, 0x00, 0x00]
        positive.withUnsafeBytes { scan in
            #expect(le16.value(in: scan, at: 0) == 0x1234)
            #expect(le32.value(in: scan, at: 0) == 0x1234)
            #expect(be16.value(in: scan, at: 0) == 0x3412)
        }
        let repeated: [UInt8] = [1, 0, 2, 0, 0xFF, 0xFF]
        let r = try #require(ScanElementType(parsing: "le:s16/16X3>>0"))
        repeated.withUnsafeBytes { scan in
            #expect((0..<3).map { r.value(in: scan, at: 0, repeat: $0) } == [1, 2, -1])
        }
    }
}

@Suite("Scan layout and decoding")
struct ScanLayoutTests {
    private func element(_ name: String, _ index: Int, _ type: String, scale: Double = 1, offset: Double = 0) -> ScanLayout.Element {
        ScanLayout.Element(name: name, index: index, type: ScanElementType(parsing: type)!,
                           conversion: ChannelConversion(scale: scale, offset: offset))
    }

    @Test("each element at an offset aligned to its size, the scan padded to the largest (iio_compute_scan_bytes)")
    func offsets() throws {
        // Three 16-bit axes and the 64-bit timestamp: 0, 2, 4, then 8; 16 bytes.
        let accel = try #require(ScanLayout(elements: [
            element("timestamp", 3, "le:s64/64>>0"), element("accel_y", 1, "le:s16/16>>0"),
            element("accel_x", 0, "le:s16/16>>0"), element("accel_z", 2, "le:s16/16>>0"),
        ]))
        #expect(accel.elements.map(\.name) == ["accel_x", "accel_y", "accel_z", "timestamp"])
        #expect(accel.elements.map(\.offset) == [0, 2, 4, 8])
        #expect(accel.scanBytes == 16)
        #expect(accel.valueNames == ["accel_x", "accel_y", "accel_z"])

        // A byte, then a 32-bit value: aligned to 4; the scan is a multiple of 4.
        let mixed = try #require(ScanLayout(elements: [element("intensity_both", 0, "le:u8/8>>0"),
                                                       element("illuminance", 1, "le:u32/32>>0"),
                                                       element("proximity", 2, "le:u8/8>>0")]))
        #expect(mixed.elements.map(\.offset) == [0, 4, 8])
        #expect(mixed.scanBytes == 12)

        // Without a timestamp, three 32-bit storage words: 12 bytes, no padding.
        let three = try #require(ScanLayout(elements: (0..<3).map { element("magn_\($0)", $0, "le:s16/32>>0") }))
        #expect(three.scanBytes == 12)

        // A repeated element takes storage × repeat bytes, aligned as the kernel's ALIGN does.
        let quaternion = try #require(ScanLayout(elements: [element("temp", 0, "le:s16/16>>0"),
                                                            element("rot_quaternion", 1, "le:s32/32X4>>0"),
                                                            element("timestamp", 2, "le:s64/64>>0")]))
        #expect(quaternion.elements.map(\.offset) == [0, 16, 32])
        #expect(quaternion.scanBytes == 48)
        #expect(quaternion.valueCount == 5)

        #expect(ScanLayout(elements: []) == nil)
        #expect(ScanLayout(elements: [element("a", 0, "le:s16/16>>0"), element("b", 0, "le:s16/16>>0")]) == nil)
    }

    @Test("a byte stream of scans decodes to samples in units; the timestamp is the sample's time; a partial scan waits")
    func decoding() throws {
        // An accelerometer: x, y, z as 12-bit big-endian values shifted by 4 in 16 bits, a scale
        // of 0.0098 m/s² per count, an offset of 1 count on y, and the timestamp.
        let layout = try #require(ScanLayout(elements: [
            element("accel_x", 0, "be:s12/16>>4", scale: 0.0098), element("accel_y", 1, "be:s12/16>>4", scale: 0.0098, offset: 1),
            element("accel_z", 2, "be:s12/16>>4", scale: 0.0098), element("timestamp", 3, "le:s64/64>>0"),
        ]))
        func scan(_ x: Int16, _ y: Int16, _ z: Int16, time: Int64) -> [UInt8] {
            var bytes: [UInt8] = []
            for v in [x, y, z] {
                let stored = UInt16(bitPattern: v << 4) | 0x000F   // low 4 bits are noise the shift drops
                bytes += [UInt8(stored >> 8), UInt8(stored & 0xFF)]
            }
            bytes += [0, 0]   // padding to the timestamp's 8-byte alignment
            bytes += withUnsafeBytes(of: time.littleEndian) { Array($0) }
            return bytes
        }
        let stream = scan(0, -1000, 1000, time: 5_000_000_000) + scan(100, 99, -2048, time: 5_010_000_000) + [1, 2, 3]
        let (samples, consumed) = stream.withUnsafeBytes { layout.samples(from: $0, readTime: 42, useTimestamp: true) }
        #expect(consumed == 32)
        #expect(samples.map(\.time) == [5_000_000_000, 5_010_000_000])
        let expected: [[Double]] = [[0, -999 * 0.0098, 1000 * 0.0098], [100 * 0.0098, 100 * 0.0098, -2048 * 0.0098]]
        for (sample, want) in zip(samples, expected) {
            #expect(zip(sample.values, want).allSatisfy { abs($0 - $1) < 1e-9 }, "\(sample.values) vs \(want)")
        }
        // The timestamp not trusted (its clock is not monotonic): the read time.
        let untimed = stream.withUnsafeBytes { layout.samples(from: $0, readTime: 42, useTimestamp: false) }
        #expect(untimed.samples.map(\.time) == [42, 42])
    }

    @Test("temperature and humidity come from the kernel's thousandths")
    func units() {
        #expect(ChannelConversion(scale: 1, offset: 0, unitFactor: ChannelConversion.unitFactor(for: .temp)).physical(23_500) == 23.5)
        #expect(ChannelConversion.unitFactor(for: .humidityrelative) == 0.001)
        #expect(ChannelConversion.unitFactor(for: .illuminance) == 1)
        // (raw + offset) × scale: a TMP sensor with offset −2731.5 and scale 100 (m°C per count).
        let tmp = ChannelConversion(scale: 100, offset: -2731.5, unitFactor: 0.001)
        #expect(abs(tmp.physical(2981.5) - 25.0) < 1e-9)
    }
}
