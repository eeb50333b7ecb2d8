import InputModel
import Reactive
import Synchronization

/// The current state of every device, readable from any thread without locks and without
/// tearing.
///
/// - Directory: the set of devices is an immutable `Directory` object published through an
///   atomic pointer. Readers announce themselves in a reader count, load and retain the
///   pointer, and leave — they never wait. A writer that replaces the directory retires the
///   old one and releases retired directories once it sees no reader inside (the pointer
///   swap and the reader count are sequentially consistent, so a reader either retained
///   the old directory before the check or loads the new one).
/// - Per-device state: a fixed block of atomic words behind a sequence lock. The device's
///   single writer (its filter stage) makes the sequence odd, writes, makes it even;
///   readers copy the block and retry if the sequence moved. A snapshot is therefore always
///   the state at one frame boundary.
///
/// Writers: directory changes (`add`, `remove`) come from one thread at a time (the hub's
/// input scheduler); each slot has one writer. Both rules are checked, not assumed: a second
/// writer entering while one is inside stops the process with a message naming the rule
/// (a torn directory or slot would otherwise be published silently).
public final class StateStore: @unchecked Sendable {
    /// The immutable device set.
    final class Directory {
        let slots: [DeviceID: Slot]
        let order: [DeviceID]

        init(slots: [DeviceID: Slot], order: [DeviceID]) {
            self.slots = slots
            self.order = order
        }
    }

    private let directory: Atomic<Unmanaged<Directory>>
    private let readers = Atomic<Int>(0)
    /// Set while a directory writer is inside `add`/`remove`.
    private let writing = Atomic<Bool>(false)
    // Touched only by the (single) directory writer.
    private var retired: [Unmanaged<Directory>] = []

    /// An empty store.
    public init() {
        directory = Atomic(Unmanaged.passRetained(Directory(slots: [:], order: [])))
    }

    deinit {
        directory.load(ordering: .acquiring).release()
        for d in retired { d.release() }
    }

    /// Runs `body` with the current directory, retained for the duration.
    private func withDirectory<T>(_ body: (Directory) -> T) -> T {
        readers.wrappingAdd(1, ordering: .sequentiallyConsistent)
        let pointer = directory.load(ordering: .sequentiallyConsistent)
        _ = pointer.retain()   // while announced as a reader: the writer cannot release it now
        readers.wrappingSubtract(1, ordering: .sequentiallyConsistent)
        let dir = pointer.takeRetainedValue()
        return body(dir)
    }

    private func publish(_ next: Directory) {
        let old = directory.exchange(Unmanaged.passRetained(next), ordering: .sequentiallyConsistent)
        retired.append(old)
        if readers.load(ordering: .sequentiallyConsistent) == 0 {
            for d in retired { d.release() }
            retired.removeAll(keepingCapacity: true)
        }
    }

    /// Adds a device (or replaces the slot of a device with the same id) and returns the
    /// slot its filter stage writes to.
    @discardableResult
    public func add(_ info: DeviceInfo) -> Slot {
        enterWriter()
        defer { leaveWriter() }
        let slot = Slot(info: info)
        let current = withDirectory { $0 }
        var slots = current.slots
        var order = current.order
        if slots[info.id] == nil { order.append(info.id) }
        slots[info.id] = slot
        publish(Directory(slots: slots, order: order))
        return slot
    }

    /// Removes a device; its state leaves the store.
    public func remove(_ id: DeviceID) {
        remove(id, only: nil)
    }

    /// Removes `slot`'s device if `slot` is still the device's slot (not one that replaced it).
    public func remove(_ slot: Slot) {
        remove(slot.info.id, only: slot)
    }

    private func remove(_ id: DeviceID, only slot: Slot?) {
        enterWriter()
        defer { leaveWriter() }
        let current = withDirectory { $0 }
        guard let present = current.slots[id], slot == nil || present === slot else { return }
        var slots = current.slots
        slots[id] = nil
        publish(Directory(slots: slots, order: current.order.filter { $0 != id }))
    }

    private func enterWriter() {
        let (entered, _) = writing.compareExchange(expected: false, desired: true, ordering: .acquiring)
        precondition(entered, "StateStore: two directory writers at once (add/remove must come from one thread at a time)")
    }

    private func leaveWriter() { writing.store(false, ordering: .releasing) }

    /// The devices, in the order they were added.
    public var devices: [DeviceInfo] {
        withDirectory { dir in dir.order.compactMap { dir.slots[$0]?.info } }
    }

    /// The number of devices.
    public var count: Int { withDirectory { $0.order.count } }

    /// A snapshot of one device's state, or nil if it is not in the store.
    public func state(of id: DeviceID) -> DeviceState? {
        withDirectory { $0.slots[id] }?.snapshot()
    }

    /// Snapshots of every device.
    public func states() -> [DeviceState] {
        withDirectory { dir in dir.order.compactMap { dir.slots[$0] } }.map { $0.snapshot() }
    }

    /// The slot of one device (for its writer), or nil.
    public func slot(of id: DeviceID) -> Slot? {
        withDirectory { $0.slots[id] }
    }
}

extension StateStore {
    /// One device's state block: atomic words behind a sequence lock.
    public final class Slot: @unchecked Sendable {
        /// Counts this object in `LiveResources` until it is destroyed.
        private let live = LiveResources.Token()
        /// The device.
        public let info: DeviceInfo

        // Layout of the word block.
        static let keyWords = 12                  // KEY_MAX 0x2ff → 768 bits
        static let absBase = keyWords             // 64 axes
        static let absCount = 64
        static let absSeen = absBase + absCount   // bit per axis with a value
        static let switchBits = absSeen + 1
        static let ledBits = switchBits + 1
        static let lastTime = ledBits + 1
        static let hasTime = lastTime + 1
        static let counterBase = hasTime + 1
        enum Counter: Int, CaseIterable {
            case framesIn, eventsIn, framesOut, eventsOut, framesDropped, synDropped, mscDropped
        }
        static let filterBase = counterBase + Counter.allCases.count
        /// The filters (made once: `allCases` builds an array).
        static let filterKinds = FilterKind.allCases
        static let wordCount = filterBase + filterKinds.count * 3

        /// The first of a filter's three words (dropped, delayed, merged). A switch rather than
        /// a position in `filterKinds`, so the per-frame counter write is straight-line stores.
        @inline(__always)
        static func filterWord(_ kind: FilterKind) -> Int {
            switch kind {
            case .keyChatter: filterBase
            case .debounce: filterBase + 3
            case .absHysteresis: filterBase + 6
            case .absRate: filterBase + 9
            case .relRate: filterBase + 12
            case .wheel: filterBase + 15
            case .bounceKeys: filterBase + 18
            case .slowKeys: filterBase + 21
            }
        }

        private let sequence = Atomic<UInt64>(0)
        private let words: UnsafeMutablePointer<Atomic<UInt64>>

        init(info: DeviceInfo) {
            self.info = info
            words = .allocate(capacity: Self.wordCount)
            for i in 0..<Self.wordCount { (words + i).initialize(to: Atomic(0)) }
            // Absolute axes start at their absinfo value (what EVIOCGABS reported).
            var seen: UInt64 = 0
            for (code, abs) in info.absInfo where Int(code) < Self.absCount {
                words[Self.absBase + Int(code)].store(UInt64(UInt32(bitPattern: abs.value)), ordering: .relaxed)
                seen |= 1 << UInt64(code)
            }
            words[Self.absSeen].store(seen, ordering: .relaxed)
        }

        deinit {
            words.deinitialize(count: Self.wordCount)
            words.deallocate()
        }

        // MARK: writer side (one writer per slot)

        /// Applies one write transaction: everything `body` writes becomes visible to readers
        /// at once.
        public func write(_ body: (inout Writer) -> Void) {
            let s = sequence.load(ordering: .relaxed)
            let (entered, _) = sequence.compareExchange(expected: s, desired: s &+ 1, ordering: .relaxed)
            precondition(entered && s & 1 == 0, "StateStore.Slot: two writers at once for \(info.id) (a slot has one writer)")
            atomicMemoryFence(ordering: .releasing)
            var writer = Writer(words: words)
            body(&writer)
            sequence.store(s &+ 2, ordering: .releasing)
        }

        /// Write access inside `write(_:)`.
        public struct Writer {
            let words: UnsafeMutablePointer<Atomic<UInt64>>

            @inline(__always)
            func get(_ i: Int) -> UInt64 { words[i].load(ordering: .relaxed) }
            @inline(__always)
            func set(_ i: Int, _ v: UInt64) { words[i].store(v, ordering: .relaxed) }

            /// Applies the state changes of one filtered event.
            public func apply(_ event: InputEvent) {
                switch event.type {
                case EventType.key:
                    guard event.code < 768 else { return }
                    let w = Int(event.code) >> 6, bit = UInt64(1) << UInt64(event.code & 63)
                    set(w, event.value != 0 ? get(w) | bit : get(w) & ~bit)
                case EventType.abs:
                    guard event.code < 64 else { return }
                    set(Slot.absBase + Int(event.code), UInt64(UInt32(bitPattern: event.value)))
                    set(Slot.absSeen, get(Slot.absSeen) | (1 << UInt64(event.code)))
                case EventType.sw:
                    guard event.code < 64 else { return }
                    let bit = UInt64(1) << UInt64(event.code)
                    set(Slot.switchBits, event.value != 0 ? get(Slot.switchBits) | bit : get(Slot.switchBits) & ~bit)
                case EventType.led:
                    guard event.code < 64 else { return }
                    let bit = UInt64(1) << UInt64(event.code)
                    set(Slot.ledBits, event.value != 0 ? get(Slot.ledBits) | bit : get(Slot.ledBits) & ~bit)
                default:
                    break
                }
            }

            /// Applies a delivered frame: its events and its time.
            public func apply(_ frame: InputFrame) {
                for e in frame.events { apply(e) }
                set(Slot.lastTime, UInt64(bitPattern: frame.time))
                set(Slot.hasTime, 1)
            }

            /// Stores the counters.
            public func setCounters(_ c: DeviceCounters) {
                set(Slot.counterBase + Counter.framesIn.rawValue, c.framesIn)
                set(Slot.counterBase + Counter.eventsIn.rawValue, c.eventsIn)
                set(Slot.counterBase + Counter.framesOut.rawValue, c.framesOut)
                set(Slot.counterBase + Counter.eventsOut.rawValue, c.eventsOut)
                set(Slot.counterBase + Counter.framesDropped.rawValue, c.framesDropped)
                set(Slot.counterBase + Counter.synDropped.rawValue, c.synDropped)
                set(Slot.counterBase + Counter.mscDropped.rawValue, c.mscDropped)
                // One line per `FilterKind`, as in `filterWord` (whose switch is exhaustive);
                // StateStoreTests.snapshotFields reads every filter's counts back.
                setFilter(.keyChatter, c)
                setFilter(.debounce, c)
                setFilter(.absHysteresis, c)
                setFilter(.absRate, c)
                setFilter(.relRate, c)
                setFilter(.wheel, c)
                if c.accessibilityCounted {   // one test per frame while they are off
                    setFilter(.bounceKeys, c)
                    setFilter(.slowKeys, c)
                }
            }

            @inline(__always)
            private func setFilter(_ kind: FilterKind, _ c: DeviceCounters) {
                let f = c[kind], w = Slot.filterWord(kind)
                set(w, f.dropped)
                set(w + 1, f.delayed)
                set(w + 2, f.merged)
            }
        }

        // MARK: reader side (any thread)

        /// A consistent copy of the state (retries while the writer is inside).
        public func snapshot() -> DeviceState {
            var copy = [UInt64](repeating: 0, count: Self.wordCount)
            var spins = 0
            while true {
                let before = sequence.load(ordering: .acquiring)
                if before & 1 == 0 {
                    for i in 0..<Self.wordCount { copy[i] = words[i].load(ordering: .relaxed) }
                    atomicMemoryFence(ordering: .acquiring)
                    if sequence.load(ordering: .relaxed) == before { break }
                }
                spins += 1
                if spins > 64 { yieldThread() }
            }
            return Self.decode(copy, info: info)
        }

        static func decode(_ w: [UInt64], info: DeviceInfo) -> DeviceState {
            var keys: [UInt16] = []
            for i in 0..<keyWords where w[i] != 0 {
                for b in 0..<64 where w[i] & (1 << UInt64(b)) != 0 { keys.append(UInt16(i * 64 + b)) }
            }
            var abs: [UInt16: Int32] = [:]
            let seen = w[absSeen]
            for c in 0..<absCount where seen & (1 << UInt64(c)) != 0 {
                abs[UInt16(c)] = Int32(bitPattern: UInt32(truncatingIfNeeded: w[absBase + c]))
            }
            func bits(_ word: UInt64) -> [UInt16] { (0..<64).filter { word & (1 << UInt64($0)) != 0 }.map(UInt16.init) }
            var counters = DeviceCounters()
            counters.framesIn = w[counterBase + Counter.framesIn.rawValue]
            counters.eventsIn = w[counterBase + Counter.eventsIn.rawValue]
            counters.framesOut = w[counterBase + Counter.framesOut.rawValue]
            counters.eventsOut = w[counterBase + Counter.eventsOut.rawValue]
            counters.framesDropped = w[counterBase + Counter.framesDropped.rawValue]
            counters.synDropped = w[counterBase + Counter.synDropped.rawValue]
            counters.mscDropped = w[counterBase + Counter.mscDropped.rawValue]
            for kind in Slot.filterKinds {
                let i = filterWord(kind)
                counters[kind] = FilterCounts(dropped: w[i], delayed: w[i + 1], merged: w[i + 2])
            }
            return DeviceState(
                info: info, keysDown: keys, absolute: abs, switchesOn: bits(w[switchBits]), ledsOn: bits(w[ledBits]),
                lastEventTime: w[hasTime] != 0 ? Int64(bitPattern: w[lastTime]) : nil, counters: counters)
        }
    }
}

#if canImport(Glibc)
import Glibc
@inline(__always) func yieldThread() { sched_yield() }
#else
import Darwin
@inline(__always) func yieldThread() { sched_yield() }
#endif
