import DeviceStreams
import Foundation
import DeviceIO
import InputModel
import Reactive
import ReactiveTesting
@testable import Sensors
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Waits up to 5 s for `condition`, checking every millisecond.
private func eventually(_ condition: () -> Bool) -> Bool {
    for _ in 0..<5000 where !condition() { usleep(1000) }
    return condition()
}

/// State touched only on the loop thread; tests read it through `loop.sync`.
private final class Box<T>: @unchecked Sendable {
    var value: T
    init(_ value: T) { self.value = value }
}

@Suite("Polled sensors on one timer", .ownLiveResources)
struct PolledReadingTests {
    @Test("one timer ticks for every polled sensor; values in units at the read time; no timer once none is read")
    func oneTimer() throws {
        let baseline = LiveResources.owned
        let tree = SysfsTree()
        defer { tree.remove() }
        let light = IIODevice(path: tree.device("iio:device0", ["name": "als", "in_illuminance_raw": "100", "in_illuminance_scale": "0.5"]))
        let accel = IIODevice(path: tree.device("iio:device1", [
            "name": "accel", "in_accel_x_raw": "0", "in_accel_y_raw": "-981", "in_accel_z_raw": "0", "in_accel_scale": "0.01",
        ]))
        let scheduler = TestScheduler()
        var lux: [SensorSample] = []
        var tilt: [SensorSample] = []
        do {
            let poller = SensorPoller(loop: scheduler, interval: RxTimeInterval.milliseconds(100).nanoseconds)
            let lightReader = try PolledReader(device: light, deliver: { lux.append($0) }, gone: {})
            let accelReader = try PolledReader(device: accel, deliver: { tilt.append($0) }, gone: {})
            let lightKey = poller.add(lightReader)
            scheduler.advanceTo(50)
            let accelKey = poller.add(accelReader)
            _ = scheduler.scheduleAt(150) { tree.set("iio:device0/in_illuminance_raw", "400") }
            scheduler.advanceTo(350)
            #expect(poller.ticks == 3)   // 100, 200, 300 ms: one timer for both
            #expect(lux.map(\.time) == [100, 200, 300].map { scheduler.nanoseconds($0) })
            #expect(lux.map(\.values) == [[50], [200], [200]])
            #expect(tilt.map(\.time) == [100, 200, 300].map { scheduler.nanoseconds($0) })
            #expect(tilt.allSatisfy { $0.values == [0, -9.81, 0] })
            poller.remove(lightKey)
            scheduler.advanceTo(450)
            #expect(lux.count == 3 && tilt.count == 4)
            poller.remove(accelKey)
            #expect(poller.memberCount == 0)
            scheduler.advanceTo(2000)
            #expect(poller.ticks == 4)
            #expect(!scheduler.hasPendingWork)   // the timer is gone: an idle sensor costs nothing
            lightReader.close()
            accelReader.close()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("a channel that cannot be parsed skips the tick's sample; a missing attribute fails the open")
    func badValues() throws {
        let tree = SysfsTree()
        defer { tree.remove() }
        let light = IIODevice(path: tree.device("iio:device0", ["name": "als", "in_illuminance_raw": "oops"]))
        var samples: [SensorSample] = []
        let reader = try PolledReader(device: light, deliver: { samples.append($0) }, gone: {})
        reader.poll(time: 1)
        tree.set("iio:device0/in_illuminance_raw", "12")
        reader.poll(time: 2)
        #expect(samples == [SensorSample(time: 2, values: [12])])
        reader.close()
        tree.remove()
        #expect(throws: SystemError.self) { try PolledReader(device: light, deliver: { _ in }, gone: {}) }
    }
}

@Suite("Buffered sensors", .ownLiveResources)
struct BufferedReadingTests {
    /// A gyroscope with a buffer, its node a FIFO the test writes scans into.
    func gyroscope(_ tree: SysfsTree, clock: String = "monotonic") -> (IIODevice, String) {
        let path = tree.device("iio:device0", [
            "name": "gyro_3d", "in_anglvel_scale": "0.001",
            "buffer/enable": "0", "buffer/length": "2",
            "trigger/current_trigger": "",
            "current_timestamp_clock": clock,
            "scan_elements/in_anglvel_x_en": "0", "scan_elements/in_anglvel_x_index": "0", "scan_elements/in_anglvel_x_type": "le:s16/16>>0",
            "scan_elements/in_anglvel_y_en": "0", "scan_elements/in_anglvel_y_index": "1", "scan_elements/in_anglvel_y_type": "le:s16/16>>0",
            "scan_elements/in_anglvel_z_en": "1", "scan_elements/in_anglvel_z_index": "2", "scan_elements/in_anglvel_z_type": "le:s16/16>>0",
            "scan_elements/in_voltage0_en": "1", "scan_elements/in_voltage0_index": "3", "scan_elements/in_voltage0_type": "le:u16/16>>0",
            "scan_elements/in_timestamp_en": "0", "scan_elements/in_timestamp_index": "4", "scan_elements/in_timestamp_type": "le:s64/64>>0",
        ])
        let node = tree.root + "/iio:device0.node"
        precondition(mkfifo(node, 0o600) == 0)
        return (IIODevice(path: path), node)
    }

    private func scan(_ x: Int16, _ y: Int16, _ z: Int16, time: Int64) -> [UInt8] {
        var bytes: [UInt8] = []
        for v in [x, y, z] { bytes += withUnsafeBytes(of: v.littleEndian) { Array($0) } }
        bytes += [0, 0]
        bytes += withUnsafeBytes(of: time.littleEndian) { Array($0) }
        return bytes
    }

    @Test("set-up enables the scan elements, the trigger, the length and the buffer; scans decode on the loop; stop restores it all")
    func readAndRestore() throws {
        let baseline = LiveResources.owned
        let tree = SysfsTree()
        defer { tree.remove() }
        let (device, node) = gyroscope(tree)
        let loop = try InputLoop(name: "test.sensors")
        defer { loop.shutdown() }
        let samples = Box<[SensorSample]>([])
        let gone = Box(false)
        do {
            let reader = try loop.sync { Result { () throws(SystemError) -> BufferedReader in
                let reader = try BufferedReader(device: device, devnode: node,
                                                setup: .init(trigger: "gyro_3d-dev0", bufferLength: 64, useTimestamp: true),
                                                deliver: { samples.value.append($0) }, gone: { gone.value = true })
                reader.start(loop: loop)
                return reader
            } }.get()
            #expect(tree.get("iio:device0/buffer/enable") == "1")
            #expect(tree.get("iio:device0/buffer/length") == "64")
            #expect(tree.get("iio:device0/trigger/current_trigger") == "gyro_3d-dev0")
            #expect(["x", "y", "z"].map { tree.get("iio:device0/scan_elements/in_anglvel_\($0)_en") } == ["1", "1", "1"])
            // Not a channel evflow reads: off while reading, so the scan is the layout's.
            #expect(tree.get("iio:device0/scan_elements/in_voltage0_en") == "0")
            #expect(tree.get("iio:device0/scan_elements/in_timestamp_en") == "1")
            let writer = open(node, O_WRONLY | O_NONBLOCK)
            #expect(writer >= 0)
            // Two scans and half of a third: the half waits for its rest.
            var bytes = scan(1000, -1000, 0, time: 7_000_000_000) + scan(1, 2, 3, time: 7_001_000_000)
            let third = scan(-5, 5, 9, time: 7_002_000_000)
            bytes += third[0..<5]
            #expect(write(writer, bytes, bytes.count) == bytes.count)
            #expect(eventually { loop.sync { samples.value.count } == 2 })
            #expect(write(writer, Array(third[5...]), third.count - 5) == third.count - 5)
            #expect(eventually { loop.sync { samples.value.count } == 3 })
            let got = loop.sync { samples.value }
            #expect(got.map(\.time) == [7_000_000_000, 7_001_000_000, 7_002_000_000])
            let want: [[Double]] = [[1, -1, 0], [0.001, 0.002, 0.003], [-0.005, 0.005, 0.009]]
            #expect(zip(got, want).allSatisfy { zip($0.values, $1).allSatisfy { abs($0 - $1) < 1e-12 } }, "\(got)")
            loop.sync { reader.stop() }
            close(writer)
            #expect(tree.get("iio:device0/buffer/enable") == "0")
            #expect(tree.get("iio:device0/buffer/length") == "2")
            #expect(tree.get("iio:device0/trigger/current_trigger") == "")
            #expect(["x", "y", "z"].map { tree.get("iio:device0/scan_elements/in_anglvel_\($0)_en") } == ["0", "0", "1"])
            #expect(tree.get("iio:device0/scan_elements/in_timestamp_en") == "0")
            #expect(tree.get("iio:device0/scan_elements/in_voltage0_en") == "1")
            #expect(!loop.sync { gone.value })
        }
        #expect(eventually { LiveResources.owned == baseline })
    }
}

extension BufferedReadingTests {
    @Test("the timestamp clock is set to monotonic for the reading and set back after; without the attribute, the read time")
    func clock() throws {
        let tree = SysfsTree()
        defer { tree.remove() }
        let (device, node) = gyroscope(tree, clock: "realtime")
        let loop = try InputLoop(name: "test.sensors")
        defer { loop.shutdown() }
        let samples = Box<[SensorSample]>([])
        let reader = try loop.sync { Result { () throws(SystemError) -> BufferedReader in
            let reader = try BufferedReader(device: device, devnode: node, setup: .init(trigger: nil, bufferLength: 8, useTimestamp: true),
                                            deliver: { samples.value.append($0) }, gone: {})
            reader.start(loop: loop)
            return reader
        } }.get()
        #expect(tree.get("iio:device0/current_timestamp_clock") == "monotonic")
        #expect(tree.get("iio:device0/scan_elements/in_timestamp_en") == "1")
        let writer = open(node, O_WRONLY | O_NONBLOCK)
        let bytes = scan(1, 2, 3, time: 123_456_789)
        #expect(write(writer, bytes, bytes.count) == bytes.count)
        #expect(eventually { loop.sync { samples.value.count } == 1 })
        #expect(loop.sync { samples.value.map(\.time) } == [123_456_789])
        loop.sync { reader.stop() }
        close(writer)
        #expect(tree.get("iio:device0/current_timestamp_clock") == "realtime")

        // A kernel without current_timestamp_clock stamps with CLOCK_REALTIME: the timestamp
        // stays off and the sample's time is when it was read.
        let old = SysfsTree()
        defer { old.remove() }
        let (oldDevice, oldNode) = gyroscope(old)
        _ = unlink(old.root + "/iio:device0/current_timestamp_clock")
        let legacy = IIODevice(path: oldDevice.path)
        #expect(legacy.timestampClock == nil)
        let oldSamples = Box<[SensorSample]>([])
        let oldReader = try loop.sync { Result { () throws(SystemError) -> BufferedReader in
            let reader = try BufferedReader(device: legacy, devnode: oldNode, setup: .init(trigger: nil, bufferLength: 8, useTimestamp: true),
                                            deliver: { oldSamples.value.append($0) }, gone: {})
            reader.start(loop: loop)
            return reader
        } }.get()
        #expect(old.get("iio:device0/scan_elements/in_timestamp_en") == "0")
        let oldWriter = open(oldNode, O_WRONLY | O_NONBLOCK)
        var threeAxes: [UInt8] = []
        for v: Int16 in [1, 2, 3] { threeAxes += withUnsafeBytes(of: v.littleEndian) { Array($0) } }
        let before = monotonicNow()
        #expect(write(oldWriter, threeAxes, threeAxes.count) == threeAxes.count)
        #expect(eventually { loop.sync { oldSamples.value.count } == 1 })
        let time = loop.sync { oldSamples.value[0].time }
        #expect(time >= before && time <= monotonicNow())
        loop.sync { oldReader.stop() }
        close(oldWriter)
    }
}

@Suite("A sensor's reading lifetime", .ownLiveResources)
struct SensorReadingTests {
    /// A reading whose "device" records what was opened and stopped.
    private final class Fake {
        var opened = 0
        var stopped = 0
        var deliver: ((SensorSample) -> Void)?
        var gone: (() -> Void)?
        var fail: SystemError?
    }

    private func reading(_ fake: Fake) -> SensorReading {
        SensorReading { deliver, gone in
            if let error = fake.fail { throw error }
            fake.opened += 1
            fake.deliver = deliver
            fake.gone = gone
            return { fake.stopped += 1 }
        }
    }

    @Test("nothing is read until subscribed; dispose stops; subscribe again reads again; one reader at a time")
    func subscriptions() {
        let baseline = LiveResources.owned
        do {
            let scheduler = TestScheduler()
            let fake = Fake()
            let reading = reading(fake)
            #expect(fake.opened == 0)
            let first = scheduler.createObserver(SensorSample.self)
            let one = SensorReading.Subscriber(first.asObserver())
            reading.start(one)
            #expect(fake.opened == 1 && reading.isReading)
            fake.deliver?(SensorSample(time: 1, values: [2]))
            let second = scheduler.createObserver(SensorSample.self)
            reading.start(SensorReading.Subscriber(second.asObserver()))
            #expect(second.events.count == 1 && second.events[0].value.error as? SensorStreamError == .samplesAlreadySubscribed)
            reading.stop(one)
            #expect(fake.stopped == 1 && !reading.isReading)
            #expect(first.elements == [SensorSample(time: 1, values: [2])])
            let again = scheduler.createObserver(SensorSample.self)
            let two = SensorReading.Subscriber(again.asObserver())
            reading.start(two)
            #expect(fake.opened == 2)
            // The sensor goes away: reading stops, the samples and the removal complete; later
            // subscribers of either complete at once.
            var removed = 0
            let removal = reading.removal.subscribe(onCompleted: { removed += 1 })
            #expect(removed == 0)
            fake.gone?()
            #expect(fake.stopped == 2)
            #expect(again.events.count == 1 && again.events[0].value.isCompletion)
            #expect(removed == 1)
            _ = reading.removal.subscribe(onCompleted: { removed += 1 })
            #expect(removed == 2)
            removal.dispose()
            let late = scheduler.createObserver(SensorSample.self)
            reading.start(SensorReading.Subscriber(late.asObserver()))
            #expect(late.events.count == 1 && late.events[0].value.isCompletion && fake.opened == 2)
            // A subscriber disposed before its start reaches the loop starts nothing.
            let cancelled = SensorReading.Subscriber(scheduler.createObserver(SensorSample.self).asObserver())
            cancelled.cancelled.dispose()
            reading.start(cancelled)
            #expect(fake.opened == 2)
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("a reading that cannot start fails its subscriber with the error, and the sensor stays readable")
    func openFailure() {
        let scheduler = TestScheduler()
        let fake = Fake()
        fake.fail = SystemError(call: "open(/dev/iio:device0)", errno: EACCES)
        let reading = reading(fake)
        let observer = scheduler.createObserver(SensorSample.self)
        reading.start(SensorReading.Subscriber(observer.asObserver()))
        #expect(observer.events.first?.value.error as? SystemError == fake.fail)
        fake.fail = nil
        reading.start(SensorReading.Subscriber(scheduler.createObserver(SensorSample.self).asObserver()))
        #expect(fake.opened == 1)
    }
}

extension Event {
    /// Whether this is `completed` (not an error).
    fileprivate var isCompletion: Bool {
        if case .completed = self { return true }
        return false
    }
}
