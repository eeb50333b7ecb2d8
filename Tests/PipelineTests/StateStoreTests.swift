import Foundation
import InputModel
import Pipeline
import Reactive
import Synchronization
import ReactiveTesting
import Testing

@Suite("StateStore", .ownLiveResources) struct StateStoreTests {
    static let keyboard = device(name: "Test Keyboard", classes: [.keyboard], capabilities: [
        EventType.key: [C.KEY_A, C.KEY_B], EventType.led: [C.LED_CAPSL], EventType.sw: [C.SW_LID],
        EventType.abs: [C.ABS_X, C.ABS_Y],
    ], absInfo: [C.ABS_X: AbsInfo(value: 7, minimum: 0, maximum: 100),
                 C.ABS_Y: AbsInfo(value: -3, minimum: -10, maximum: 10)])

    @Test("snapshot fields: keys, axes (absinfo start values), switches, LEDs, time, counters")
    func snapshotFields() throws {
        let store = StateStore()
        let slot = store.add(Self.keyboard)
        var initial = try #require(store.state(of: Self.keyboard.id))
        #expect(initial.info == Self.keyboard)
        #expect(initial.keysDown.isEmpty && initial.switchesOn.isEmpty && initial.ledsOn.isEmpty)
        #expect(initial.absolute == [C.ABS_X: 7, C.ABS_Y: -3])
        #expect(initial.lastEventTime == nil)
        #expect(initial.counters == DeviceCounters())

        var counters = DeviceCounters()
        counters.framesIn = 5
        counters.eventsIn = 9
        counters.framesOut = 4
        counters.eventsOut = 7
        counters.framesDropped = 1
        counters.synDropped = 1
        counters.mscDropped = 2
        // Every filter with counts of its own: a filter the slot does not write, or writes
        // into another's words, comes back wrong.
        for (i, kind) in FilterKind.allCases.enumerated() {
            let n = UInt64(3 * i)
            counters[kind] = FilterCounts(dropped: n + 1, delayed: n + 2, merged: n + 3)
        }
        slot.write { w in
            w.apply(frame(40, [(EventType.key, C.KEY_B, 1), (EventType.key, C.KEY_A, 2),
                               (EventType.abs, C.ABS_X, -50), (EventType.sw, C.SW_LID, 1),
                               (EventType.led, C.LED_CAPSL, 1), (EventType.msc, C.MSC_SCAN, 1)]))
            w.setCounters(counters)
        }
        initial = try #require(store.state(of: Self.keyboard.id))
        #expect(initial.keysDown == [C.KEY_A, C.KEY_B])   // ascending; a repeat counts as down
        #expect(initial.absolute == [C.ABS_X: -50, C.ABS_Y: -3])
        #expect(initial.switchesOn == [C.SW_LID])
        #expect(initial.ledsOn == [C.LED_CAPSL])
        #expect(initial.lastEventTime == 40 * ms)
        #expect(initial.counters == counters)

        slot.write { w in
            w.apply(frame(50, [(EventType.key, C.KEY_B, 0), (EventType.sw, C.SW_LID, 0),
                               (EventType.led, C.LED_CAPSL, 0)]))
        }
        let later = try #require(store.state(of: Self.keyboard.id))
        #expect(later.keysDown == [C.KEY_A] && later.switchesOn.isEmpty && later.ledsOn.isEmpty)
        #expect(later.lastEventTime == 50 * ms)
        #expect(store.states() == [later])
    }

    @Test("a removed device leaves the store; re-adding starts fresh")
    func removal() throws {
        let store = StateStore()
        let other = device(name: "Other", classes: [.mouse], capabilities: [:])
        let slot = store.add(Self.keyboard)
        store.add(other)
        slot.write { $0.apply(frame(1, EventType.key, C.KEY_A, 1)) }
        #expect(store.count == 2)
        #expect(store.devices.map(\.id) == [Self.keyboard.id, other.id])
        store.remove(Self.keyboard.id)
        #expect(store.state(of: Self.keyboard.id) == nil)
        #expect(store.slot(of: Self.keyboard.id) == nil)
        #expect(store.devices.map(\.id) == [other.id])
        #expect(store.count == 1)
        store.remove(Self.keyboard.id)   // twice: no effect
        #expect(store.count == 1)
        store.add(Self.keyboard)
        #expect(try #require(store.state(of: Self.keyboard.id)).keysDown.isEmpty)
        #expect(store.devices.map(\.id) == [other.id, Self.keyboard.id])
        store.remove(Self.keyboard.id)
        store.remove(other.id)
        #expect(store.count == 0 && store.states().isEmpty)
    }

    /// One writer presses KEY_A and KEY_B in one frame and releases them in the next, 200,000
    /// times; readers must never see one down without the other, nor a counter going back.
    @Test("concurrent readers never see a torn state")
    func noTearing() throws {
        try noTearingBody()
    }

    func noTearingBody() throws {
        let store = StateStore()
        let slot = store.add(Self.keyboard)
        let id = Self.keyboard.id
        let flags = Flags()
        let rounds = 200_000

        let writer = Thread {
            var counters = DeviceCounters()
            for i in 0..<rounds {
                let value: Int32 = i % 2 == 0 ? 1 : 0
                counters.framesIn &+= 1
                counters.eventsIn &+= 2
                counters.framesOut &+= 1
                counters.eventsOut &+= 2
                counters[.keyChatter].dropped &+= 1
                slot.write { w in
                    w.apply(InputFrame(time: Int64(i), events: [
                        InputEvent(time: Int64(i), type: EventType.key, code: C.KEY_A, value: value),
                        InputEvent(time: Int64(i), type: EventType.key, code: C.KEY_B, value: value),
                    ]))
                    w.setCounters(counters)
                }
            }
            flags.done.store(true, ordering: .releasing)
        }
        var readers: [Thread] = []
        for _ in 0..<2 {
            readers.append(Thread {
                var last = DeviceCounters()
                var lastTime: Int64 = -1
                repeat {
                    guard let s = store.state(of: id) else { flags.torn.add(1, ordering: .relaxed); continue }
                    let a = s.keysDown.contains(C.KEY_A), b = s.keysDown.contains(C.KEY_B)
                    let c = s.counters
                    if a != b || c.eventsIn != 2 * c.framesIn || c[.keyChatter].dropped != c.framesIn {
                        flags.torn.add(1, ordering: .relaxed)
                    }
                    if let t = s.lastEventTime, a != (t % 2 == 0) { flags.torn.add(1, ordering: .relaxed) }
                    if c.framesIn < last.framesIn || c.eventsOut < last.eventsOut
                        || (s.lastEventTime ?? -1) < lastTime {
                        flags.backwards.add(1, ordering: .relaxed)
                    }
                    last = c
                    lastTime = s.lastEventTime ?? -1
                    flags.snapshots.add(1, ordering: .relaxed)
                } while !flags.done.load(ordering: .acquiring)
                flags.finished.add(1, ordering: .releasing)
            })
        }
        readers.forEach { $0.start() }
        writer.start()
        while flags.finished.load(ordering: .acquiring) < readers.count { usleep(1000) }
        #expect(flags.torn.load(ordering: .relaxed) == 0)
        #expect(flags.backwards.load(ordering: .relaxed) == 0)
        #expect(flags.snapshots.load(ordering: .relaxed) > 0)
        let final = try #require(store.state(of: id))
        #expect(final.counters.framesIn == UInt64(rounds))
        #expect(final.keysDown.isEmpty)   // the last round released both
    }

    @Test("directory add/remove while readers read")
    func directoryChurn() {
        do {
            let store = StateStore()
            let fixed = device(name: "Always There", classes: [.keyboard], capabilities: [:])
            store.add(fixed).write { $0.apply(frame(1, EventType.key, C.KEY_A, 1)) }
            let churn = (0..<8).map { device(name: "Churn \($0)", classes: [.mouse], capabilities: [:]) }
            let flags = Flags()
            let writer = Thread {
                for i in 0..<20_000 {
                    let d = churn[i % churn.count]
                    if i % 16 < 8 { store.add(d) } else { store.remove(d.id) }
                }
                flags.done.store(true, ordering: .releasing)
            }
            var readers: [Thread] = []
            for _ in 0..<2 {
                readers.append(Thread {
                    repeat {
                        let states = store.states()
                        let devices = store.devices
                        // The fixed device is always present, first, with its key down.
                        if devices.first?.id != fixed.id || states.first?.keysDown != [C.KEY_A] {
                            flags.bad.add(1, ordering: .relaxed)
                        }
                        if states.count > churn.count + 1 || Set(devices.map(\.id)).count != devices.count {
                            flags.bad.add(1, ordering: .relaxed)
                        }
                        for d in churn {
                            if let s = store.state(of: d.id), s.info.id != d.id { flags.bad.add(1, ordering: .relaxed) }
                        }
                    } while !flags.done.load(ordering: .acquiring)
                    flags.finished.add(1, ordering: .releasing)
                })
            }
            readers.forEach { $0.start() }
            writer.start()
            while flags.finished.load(ordering: .acquiring) < readers.count { usleep(1000) }
            #expect(flags.bad.load(ordering: .relaxed) == 0)
            // 20,000 steps end with the last 8 being removals: only the fixed device is left.
            #expect(store.devices.map(\.id) == [fixed.id])
        }
        // Every retired directory and slot is released (the store releases leftovers in deinit).
    }
}

/// Shared flags and tallies of a threaded test (atomics cannot be captured directly).
final class Flags: Sendable {
    let done = Atomic<Bool>(false)
    let finished = Atomic<Int>(0)
    let torn = Atomic<Int>(0)
    let backwards = Atomic<Int>(0)
    let snapshots = Atomic<Int>(0)
    let bad = Atomic<Int>(0)
}
