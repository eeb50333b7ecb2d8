import Foundation
import InputModel
import Pipeline
import Recording
import ReactiveTesting
import Testing

/// FilterCounts' invariant (DeviceState.swift): for every filter, at any moment,
/// inputs = delivered at once + dropped + delayed + merged + held (at most one per code).
/// Checked on the pure `NoiseFilter` driven the way `filterNoise` drives it: window ends that
/// are due fire before a later frame is processed.
@Suite("NoiseFilter: counters", .ownLiveResources) struct CounterInvariantTests {
    /// Filter groups: absolute axes share one group (hysteresis and rate split one input stream).
    enum Group: Hashable { case chatter, debounce, abs, rel, wheel }

    static let settings: DeviceFilterSettings = {
        var s = DeviceFilterSettings()
        s.keys[C.KEY_A] = .chatter(window: 15 * ms)
        s.keys[C.KEY_B] = .chatter(window: 15 * ms)
        s.keys[C.BTN_LEFT] = .chatter(window: 25 * ms)
        s.switches[C.SW_LID] = .debounce(window: 20 * ms)
        s.absolute[C.ABS_X] = .absolute(hysteresis: 3, minInterval: 5 * ms)
        s.absolute[C.ABS_Y] = .absolute(hysteresis: 2, minInterval: 0)
        s.relative[C.REL_X] = .relative(minInterval: 8 * ms)
        s.wheel[C.REL_WHEEL] = WheelSetting(window: 30 * ms, hiRes: false)
        return s
    }()

    static func group(_ e: InputEvent) -> Group? {
        // One REL_WHEEL event a frame here, so a tick is an event (the wheel filter counts ticks).
        if e.type == EventType.rel && e.code == C.REL_WHEEL { return .wheel }
        switch (e.type, settings.filter(type: e.type, code: e.code)) {
        case (EventType.key, .chatter): return e.value == 2 ? nil : .chatter   // repeats bypass
        case (_, .debounce): return .debounce
        case (_, .absolute): return .abs
        case (_, .relative): return .rel
        default: return nil
        }
    }

    static func accounted(_ c: DeviceCounters, _ g: Group) -> UInt64 {
        func sum(_ k: FilterKind) -> UInt64 { c[k].dropped + c[k].delayed + c[k].merged }
        switch g {
        case .chatter: return sum(.keyChatter)
        case .debounce: return sum(.debounce)
        case .abs: return sum(.absHysteresis) + sum(.absRate)
        case .rel: return sum(.relRate)
        case .wheel: return sum(.wheel)
        }
    }

    static let codesPerGroup: [Group: UInt64] = [.chatter: 3, .debounce: 1, .abs: 2, .rel: 1, .wheel: 1]

    static func randomFrames(seed: UInt64, count: Int) -> [InputFrame] {
        var rng = SplitMix64(seed: seed)
        var t: Int64 = 1_000
        var absX: Int32 = 500, absY: Int32 = 500, scroll: Int32 = 1
        var frames: [InputFrame] = []
        for _ in 0..<count {
            t += Int64(rng.below(7))
            var events: [(UInt16, UInt16, Int32)] = []
            if rng.below(3) == 0 { events.append((EventType.msc, C.MSC_SCAN, 4)) }
            for code in [C.KEY_A, C.KEY_B, C.BTN_LEFT] where rng.below(4) == 0 {
                events.append((EventType.key, code, Int32(rng.below(10) == 0 ? 2 : rng.below(2))))
            }
            if rng.below(8) == 0 { events.append((EventType.sw, C.SW_LID, Int32(rng.below(2)))) }
            if rng.below(2) == 0 {
                absX += Int32(rng.below(11)) - 5
                events.append((EventType.abs, C.ABS_X, absX))
            }
            if rng.below(3) == 0 {
                absY += Int32(rng.below(7)) - 3
                events.append((EventType.abs, C.ABS_Y, absY))
            }
            if rng.below(2) == 0 { events.append((EventType.rel, C.REL_X, Int32(rng.below(9)) - 4)) }
            if rng.below(4) == 0 {
                // A scroll that now and then turns (a real reversal) or sends one tick back (a stray).
                if rng.below(30) == 0 { scroll = -scroll }
                events.append((EventType.rel, C.REL_WHEEL, rng.below(8) == 0 ? -scroll : scroll))
            }
            if rng.below(200) == 0 { events.append((EventType.syn, SynCode.dropped, 0)) }
            frames.append(frame(t, events))
        }
        return frames
    }

    @Test("in = out at once + dropped + delayed + merged + held, on seeded random input",
          arguments: [11, 12, 13, 14] as [UInt64])
    func invariantOnRandomInput(seed: UInt64) {
        var filter = NoiseFilter(settings: Self.settings)
        var inputs: [Group: UInt64] = [:]
        var atOnce: [Group: UInt64] = [:]
        var framesOut: UInt64 = 0, eventsOut: UInt64 = 0, eventsIn: UInt64 = 0, processedOut: UInt64 = 0

        func check(final: Bool) {
            let c = filter.counters
            for g in [Group.chatter, .debounce, .abs, .rel, .wheel] {
                let explained = atOnce[g, default: 0] + Self.accounted(c, g)
                let total = inputs[g, default: 0]
                #expect(explained <= total, "group \(g): more accounted than received")
                let held = total - min(total, explained)
                #expect(held <= (final ? 0 : Self.codesPerGroup[g]!), "group \(g): \(held) held")
            }
            #expect(c.framesOut == framesOut)
            #expect(c.eventsOut == eventsOut)
            #expect(c.eventsIn == eventsIn)
        }

        let frames = Self.randomFrames(seed: seed, count: 20_000)
        for f in frames {
            while let d = filter.nextDeadline, d < f.time {
                if let out = filter.fire(at: d) {
                    framesOut += 1
                    eventsOut += UInt64(out.events.count)
                }
            }
            for e in f.events { if let g = Self.group(e) { inputs[g, default: 0] += 1 } }
            eventsIn += UInt64(f.events.count)
            if let out = filter.process(f) {
                framesOut += 1
                processedOut += 1
                eventsOut += UInt64(out.events.count)
                for e in out.events { if let g = Self.group(e) { atOnce[g, default: 0] += 1 } }
            }
            check(final: false)
        }
        while let d = filter.nextDeadline {
            if let out = filter.fire(at: d) {
                framesOut += 1
                eventsOut += UInt64(out.events.count)
            }
        }
        check(final: true)
        #expect(!filter.hasHeldValues)
        let c = filter.counters
        #expect(c.framesIn == UInt64(frames.count))
        #expect(c.framesIn == processedOut + c.framesDropped)
        #expect(c.synDropped > 0)
        // The random input really exercised every filter.
        // (BounceKeys and SlowKeys count presses, not events, so this event balance holds only
        // with them off — docs/configuration.md; their counts are pinned in AccessKeysTests.)
        for k in FilterKind.allCases where k != .bounceKeys && k != .slowKeys {
            #expect(c[k] != FilterCounts(), "\(k) never acted")
        }
    }

    /// Every event read, accounted for once nothing is held: delivered at once, or counted by
    /// a filter (dropped, delayed, merged), or a `SYN_DROPPED`, or an `EV_MSC` event dropped with
    /// its frame.
    static func unaccounted(_ c: DeviceCounters, deliveredAtOnce: UInt64) -> Int64 {
        var counted = c.synDropped + c.mscDropped
        for kind in FilterKind.allCases { counted += c[kind].dropped + c[kind].delayed + c[kind].merged }
        return Int64(c.eventsIn) - Int64(deliveredAtOnce + counted)
    }

    /// Regression (issue #25, finding 12): `EV_MSC` events that went with frames whose other
    /// events the filters had removed were in no counter (in = out + counted drops + those).
    @Test("in = delivered at once + counted drops, on every shipped recording with the default configuration",
          arguments: Fixtures.recordings())
    func invariantOnShippedRecordings(path: String) throws {
        let recording = try Recording.read(contentsOf: Fixtures.recording(path))
        for device in recording.devices {
            var filter = NoiseFilter(settings: FilterConfig().settings(for: device.info))
            var atOnce: UInt64 = 0
            // As `filterNoise` drives it: what is due before a frame settles first.
            for f in FrameAssembler.frames(of: device.events).frames {
                while let d = filter.nextDeadline, d <= f.time { _ = filter.fire(at: d) }
                if let out = filter.process(f) { atOnce += UInt64(out.events.count) }
            }
            while let d = filter.nextDeadline { _ = filter.fire(at: d) }
            #expect(!filter.hasHeldValues)
            #expect(Self.unaccounted(filter.counters, deliveredAtOnce: atOnce) == 0,
                    "\(path) \(device.info.name): \(filter.counters)")
        }
    }

    /// The shipped dell_canvas_pen recording has no `EV_MSC` events; a Wacom pen sends its
    /// tool's `MSC_SERIAL` with every report, so one is put into each frame here. Every frame
    /// the hysteresis empties then leaves a serial alone, which must be counted.
    @Test("dell_canvas_pen with a MSC_SERIAL in every frame: the serials dropped with emptied frames are counted")
    func penSerialsAreCounted() throws {
        let recording = try Recording.read(contentsOf: Fixtures.recording("evemu-devices/tablets/dell_canvas_pen.evemu"))
        let device = recording.devices[0]
        var events: [InputEvent] = []
        for e in device.events {
            if e.isSynReport { events.append(InputEvent(time: e.time, type: EventType.msc, code: 0 /* MSC_SERIAL */, value: 0x3f1)) }
            events.append(e)
        }
        var filter = NoiseFilter(settings: FilterConfig().settings(for: device.info))
        var atOnce: UInt64 = 0
        for f in FrameAssembler.frames(of: events).frames {
            while let d = filter.nextDeadline, d <= f.time { _ = filter.fire(at: d) }
            if let out = filter.process(f) { atOnce += UInt64(out.events.count) }
        }
        let c = filter.counters
        #expect(c.framesDropped > 0)
        #expect(c.mscDropped == c.framesDropped, "one serial per emptied frame")
        #expect(Self.unaccounted(c, deliveredAtOnce: atOnce) == 0)
    }

    @Test("an EV_MSC event left alone in its frame after filtering is counted as msc_dropped")
    func mscLeftAloneIsCounted() {
        var filter = NoiseFilter(settings: Self.settings)
        _ = filter.process(frame(1_000, [(EventType.abs, C.ABS_Y, 100)]))
        #expect(filter.process(frame(2_000, [(EventType.msc, C.MSC_SCAN, 4), (EventType.abs, C.ABS_Y, 101)])) == nil)
        #expect(filter.counters.mscDropped == 1)
        #expect(filter.counters.framesDropped == 1)
        #expect(filter.counters[.absHysteresis].dropped == 1)
        #expect(Self.unaccounted(filter.counters, deliveredAtOnce: 1) == 0)
    }

    /// Regression (issue #25, finding 12): docs/protocol.md named the filters `key-debounce`
    /// and `abs-hysteresis` while STATE and STATS send `key_chatter` and `abs_hysteresis`.
    @Test("every filter name the daemon sends is in the docs, and the docs' counter examples name no other")
    func filterNamesAreTheDocumentedOnes() throws {
        let sent = Set(FilterKind.allCases.map(\.rawValue))
        for doc in ["docs/protocol.md", "docs/configuration.md"] {
            let text = try String(contentsOf: Fixtures.repositoryRoot.appendingPathComponent(doc), encoding: .utf8)
            for name in sent { #expect(text.contains("`\(name)`"), "\(doc) does not name \(name)") }
            // The per-filter objects of the examples: `"dropped":{"<filter>":n,...}`.
            var rest = Substring(text)
            while let start = rest.range(of: #""dropped":{"#) {
                let object = rest[start.upperBound...].prefix { $0 != "}" }
                for member in object.split(separator: ",") {
                    let name = member.split(separator: ":").first.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")) }
                    if let name, !name.isEmpty { #expect(sent.contains(name), "\(doc) shows a filter \(name) the daemon never sends") }
                }
                rest = rest[start.upperBound...]
            }
        }
    }
}
