import DeviceStreams
import Foundation
import DeviceIO
import InputModel
import Reactive
@testable import Sensors
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Read errors counted, and the buffered set-up's order (issue #29, item 5).
extension BufferedReadingTests {
    @Test("issue #29: the node is opened before sysfs is touched — a node that cannot be opened leaves every attribute as it was")
    func nodeFirst() throws {
        let tree = SysfsTree()
        defer { tree.remove() }
        let (device, _) = gyroscope(tree, clock: "realtime")
        let before = ["current_timestamp_clock", "buffer/enable", "buffer/length", "scan_elements/in_anglvel_x_en",
                      "scan_elements/in_voltage0_en", "scan_elements/in_timestamp_en"].map { tree.get("iio:device0/\($0)") }
        // Another reader holds the buffer (the kernel answers EBUSY); here: no node at all.
        #expect(throws: SystemError.self) {
            try BufferedReader(device: device, devnode: tree.root + "/busy.node",
                               setup: .init(trigger: "gyro_3d-dev0", bufferLength: 64, useTimestamp: true),
                               deliver: { _ in }, gone: {})
        }
        let after = ["current_timestamp_clock", "buffer/enable", "buffer/length", "scan_elements/in_anglvel_x_en",
                     "scan_elements/in_voltage0_en", "scan_elements/in_timestamp_en"].map { tree.get("iio:device0/\($0)") }
        #expect(after == before)
        #expect(tree.get("iio:device0/trigger/current_trigger") == "")
    }

    @Test("a set-up that fails after the node opened restores everything it changed, the clock included")
    func failedSetUpRestores() throws {
        let tree = SysfsTree()
        defer { tree.remove() }
        let (device, node) = gyroscope(tree, clock: "realtime")
        // The trigger cannot be written: the scan elements and the clock were changed before it.
        _ = unlink(tree.root + "/iio:device0/trigger/current_trigger")
        #expect(throws: SystemError.self) {
            try BufferedReader(device: device, devnode: node,
                               setup: .init(trigger: "gyro_3d-dev0", bufferLength: 64, useTimestamp: true),
                               deliver: { _ in }, gone: {})
        }
        #expect(tree.get("iio:device0/current_timestamp_clock") == "realtime")
        #expect(["x", "y", "z"].map { tree.get("iio:device0/scan_elements/in_anglvel_\($0)_en") } == ["0", "0", "1"])
        #expect(tree.get("iio:device0/scan_elements/in_voltage0_en") == "1")
        #expect(tree.get("iio:device0/scan_elements/in_timestamp_en") == "0")
        #expect(tree.get("iio:device0/buffer/enable") == "0")
    }
}

@Suite("Polled read errors")
struct PolledReadErrorTests {
    @Test("issue #29: every failed read is counted, not only ENODEV; failed after 10 in a row; a good read clears it")
    func counted() throws {
        let tree = SysfsTree()
        defer { tree.remove() }
        let light = IIODevice(path: tree.device("iio:device0", ["name": "als", "in_illuminance_raw": "oops"]))
        let health = SensorHealth()
        var samples: [SensorSample] = []
        var gone = false
        let reader = try PolledReader(device: light, health: health, deliver: { samples.append($0) }, gone: { gone = true })
        defer { reader.close() }
        for t in 1..<SensorHealth.failedAfter { reader.poll(time: Int64(t)) }
        #expect(health.readErrors == UInt64(SensorHealth.failedAfter - 1) && !health.failed)
        reader.poll(time: 10)
        #expect(health.failed && health.lastError == EINVAL)
        tree.set("iio:device0/in_illuminance_raw", "12")
        reader.poll(time: 11)
        #expect(!health.failed && health.readErrors == UInt64(SensorHealth.failedAfter))
        #expect(samples == [SensorSample(time: 11, values: [12])] && !gone)

        // A read error that is not ENODEV (here EISDIR: the attribute is a directory) is counted
        // and does not end the sensor.
        let dir = tree.device("iio:device1", ["name": "als2"]) + "/in_illuminance_raw"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let broken = IIODevice(path: tree.root + "/iio:device1")
        let brokenHealth = SensorHealth()
        let brokenReader = try PolledReader(device: broken, health: brokenHealth, deliver: { _ in }, gone: { gone = true })
        defer { brokenReader.close() }
        brokenReader.poll(time: 1)
        #expect(brokenHealth.readErrors == 1 && brokenHealth.lastError == EISDIR && !gone)
    }
}

@Suite("Scale and offset read again")
struct ConversionRereadTests {
    @Test("issue #29: scale and offset are read again on request (udev change) and when a value is out of range")
    func reread() throws {
        let tree = SysfsTree()
        defer { tree.remove() }
        let light = IIODevice(path: tree.device("iio:device0", ["name": "als", "in_illuminance_raw": "500",
                                                                "in_illuminance_scale": "1"]))
        var samples: [SensorSample] = []
        let reader = try PolledReader(device: light, deliver: { samples.append($0) }, gone: {})
        defer { reader.close() }
        reader.poll(time: 1)
        // The driver switches its gain: the scale changes; read again on the device's change.
        tree.set("iio:device0/in_illuminance_scale", "0.5")
        reader.poll(time: 2)
        reader.rereadConversions()
        reader.poll(time: 3)
        #expect(samples.map(\.values) == [[500], [500], [250]])
        // Without a uevent: 1,000,000 counts at the old 0.5 would be 500,000 lx, beyond sunlight:
        // scale and offset are read again and the value converted with them.
        tree.set("iio:device0/in_illuminance_scale", "0.01")
        tree.set("iio:device0/in_illuminance_raw", "1000000")
        reader.poll(time: 2_000_000_000)
        #expect(samples.last?.values == [10_000])
    }
}
