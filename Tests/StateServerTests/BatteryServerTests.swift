import DeviceStreams
import Dispatch
import Foundation
import InputModel
import Pipeline
import Reactive
import Testing
@testable import EvflowProtocol
@testable import StateServer

/// A device's battery through a real server (1.8, docs/protocol.md §4 "Batteries", §5 BATTERY;
/// docs/batteries.md): the summary of DEVICES, STATE and DEVICE added carries the reading, a
/// change comes as exactly one BATTERY to a matching watcher, an unchanged reading as none, and
/// nothing after the device is removed.
@Suite(.serialized, .ownLiveResources) struct BatteryServerTests {
    /// A hub on a serial queue; each device's battery readings come from a subject the test drives.
    final class QueueHub: @unchecked Sendable {
        let queue = DispatchQueue(label: "battery-hub")
        let hub: DeviceHub
        private let devices = PublishSubject<DeviceStream>()
        private var frames: [DeviceID: PublishSubject<InputFrame>] = [:]
        private var batteries: [DeviceID: PublishSubject<DeviceBattery?>] = [:]
        private let running: Disposable

        init() {
            hub = DeviceHub(store: StateStore(), config: FilterConfig(),
                            scheduler: SerialDispatchQueueScheduler(serialQueue: queue), latencyClock: .replay)
            running = hub.run(devices.asObservable())
            queue.sync {}
        }

        func add(_ info: DeviceInfo) {
            let f = PublishSubject<InputFrame>(), b = PublishSubject<DeviceBattery?>()
            frames[info.id] = f
            batteries[info.id] = b
            queue.sync { devices.onNext(DeviceStream(info: info, frames: f.asObservable(), batteries: b.asObservable())) }
        }

        /// A reading from the source, delivered to the hub (its `observeOn` hop included).
        func read(_ id: DeviceID, _ reading: DeviceBattery?) {
            queue.sync { batteries[id]?.onNext(reading) }
            queue.sync {}
        }

        func send(_ id: DeviceID, _ frame: InputFrame) { queue.sync { frames[id]?.onNext(frame) } }

        func remove(_ id: DeviceID) { queue.sync { frames[id]?.onCompleted() } }

        func stop() {
            queue.sync { for f in frames.values { f.onCompleted() } }
            running.dispose()
            queue.sync {}
        }
    }

    static let name = "hid-aa:bb:cc:dd:ee:ff-battery"

    @Test func theSummaryCarriesTheReadingAndAChangeIsOneBatteryMessage() async throws {
        let held = QueueHub()
        var kb = testKeyboard()
        kb.uniq = "aa:bb:cc:dd:ee:ff"
        kb.id = DeviceID(name: kb.name, inputID: kb.inputID, phys: nil, uniq: kb.uniq)
        held.add(kb)
        held.read(kb.id, DeviceBattery(percent: 87, status: .discharging, supply: Self.name))
        let (server, path) = try await startServer(hub: held.hub)
        do {
            let c = try TestClient(path: path)
            _ = try c.read()
            let devices = try c.request(#"{"class":"DEVICES"}"#)["devices"] as? [[String: Any]]
            let battery = devices?.first?["battery"] as? [String: Any]
            #expect(battery?["percent"] as? Int == 87 && battery?["status"] as? String == "discharging")
            #expect(battery?["supply"] as? String == Self.name)

            _ = try c.request(#"{"class":"WATCH","devices":["keyboard"],"types":["EV_KEY"]}"#)
            held.read(kb.id, DeviceBattery(percent: 87, status: .discharging, supply: Self.name))   // unchanged: nothing
            held.read(kb.id, DeviceBattery(percent: 86, status: .discharging, supply: Self.name))
            held.read(kb.id, nil)   // gone: no message (the protocol has no "no battery" message)
            held.send(kb.id, keyFrame(30, 1, ms: 0))
            let change = try c.read()
            #expect(change["class"] as? String == "BATTERY" && change["device"] as? String == kb.id.rawValue)
            #expect((change["battery"] as? [String: Any])?["percent"] as? Int == 86)
            #expect(try c.read()["class"] as? String == "FRAME")   // exactly one BATTERY before it

            // A device that comes while watching: announced without a battery (not read yet),
            // then its first reading as BATTERY.
            var pad = testKeyboard("Pad", product: 7)
            pad.classes = [.keyboard]
            held.add(pad)
            let added = try c.read()
            #expect(added["class"] as? String == "DEVICE" && added["action"] as? String == "added")
            #expect((added["device"] as? [String: Any])?["battery"] == nil)
            held.read(pad.id, DeviceBattery(level: .high, status: .charging, supply: "wacom_battery_0"))
            let first = try c.read()
            #expect(first["class"] as? String == "BATTERY" && first["device"] as? String == pad.id.rawValue)
            #expect((first["battery"] as? [String: Any])?["level"] as? String == "high")

            // STATE has the newest reading of each; a watcher that starts now hears no old one.
            let c2 = try TestClient(path: path)
            _ = try c2.read()
            let state = try c2.request(#"{"class":"STATE","device":"Pad"}"#)
            #expect(((state["device"] as? [String: Any])?["battery"] as? [String: Any])?["status"] as? String == "charging")
            _ = try c2.request(#"{"class":"WATCH","devices":["keyboard"],"types":["EV_KEY"]}"#)
            held.send(pad.id, keyFrame(30, 1, ms: 1))
            #expect(try c2.read()["class"] as? String == "FRAME")
            _ = try c.read()   // that frame, for the first watcher

            // Removed: no BATTERY after DEVICE removed.
            held.remove(pad.id)
            let removed = try c.read()
            #expect(removed["class"] as? String == "DEVICE" && removed["action"] as? String == "removed")
            held.read(pad.id, DeviceBattery(percent: 1, status: .discharging, supply: "wacom_battery_0"))
            held.send(kb.id, keyFrame(30, 0, ms: 2))
            #expect(try c.read()["class"] as? String == "FRAME")
        }
        await server.shutdown()
        held.stop()
    }
}
