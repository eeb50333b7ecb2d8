import DeviceStreams
import InputModel
@testable import Pipeline
import Reactive
import ReactiveTesting
import Synchronization
import Testing

/// Frame ages per stage (`DeviceHub.latency`): measured on the hub's clock against each
/// frame's own time, kept per device while it is present and in the totals after it goes.
@Suite("Latency: frame ages per stage", .ownLiveResources) struct LatencyTests {
    static let keyboard = device(name: "Latency keyboard", vendor: 7, product: 7, classes: [.keyboard],
                                 capabilities: [EventType.key: [C.KEY_A]])
    static let ms: Int64 = 1_000_000

    /// The hub's figures, taken on its (virtual) scheduler.
    func latency(_ hub: DeviceHub, _ scheduler: VirtualTimeScheduler) throws -> HubLatency {
        let result = Mutex<HubLatency?>(nil)
        hub.latency { l in result.withLock { $0 = l } }
        scheduler.advance(by: .zero)
        return try #require(result.withLock { $0 })
    }

    /// Within the histogram's resolution (two significant digits: 1 %).
    func near(_ value: UInt64, _ expected: Int64) -> Bool {
        abs(Double(value) - Double(expected)) <= Double(expected) * 0.01 + 1_000
    }

    @Test("a frame delivered 3 ms after its time is 3 ms old when read and when filtered; a held value is aged from its settling; the totals keep a removed device's ages")
    func agesAgainstTheHubsClock() throws {
        let scheduler = VirtualTimeScheduler()
        let devices = PublishSubject<DeviceStream>()
        let hub = DeviceHub(store: StateStore(), config: FilterConfig(), scheduler: scheduler, latencyClock: .monotonic)
        let running = hub.run(devices.asObservable())
        scheduler.advance(by: .zero)
        let frames = PublishSubject<InputFrame>()
        devices.onNext(DeviceStream(info: Self.keyboard, frames: frames.asObservable()))

        scheduler.advance(to: 5 * Self.ms)
        frames.onNext(InputFrame(time: 2 * Self.ms, events: [ev(EventType.key, C.KEY_A, 1, at: 2 * Self.ms)]))
        scheduler.advance(to: 9 * Self.ms)
        frames.onNext(InputFrame(time: 8 * Self.ms, events: [ev(EventType.key, C.KEY_A, 0, at: 8 * Self.ms)]))

        let present = try latency(hub, scheduler)
        #expect(present.clock == .monotonic)
        let read = try #require(present.devices[Self.keyboard.id]?[.read])
        #expect(read.count == 2)
        #expect(near(read.max, 3 * Self.ms), "the older of the two: 3 ms (got \(read.max))")
        #expect(near(read.p50, 1 * Self.ms), "the median of 1 and 3 ms is the lower one (got \(read.p50))")
        let filtered = try #require(present.devices[Self.keyboard.id]?[.filtered])
        #expect(filtered.count == 1, "the press passed at once; the release 6 ms later is held by the key debounce")
        #expect(near(filtered.max, 3 * Self.ms))
        #expect(present.total[.read]?.count == 2)

        // The held release comes out at the window's end as a frame of that time: its age is
        // counted from then (0 here, where the timer fires on time: below the 1-µs resolution).
        scheduler.advance(to: 40 * Self.ms)
        let settled = try latency(hub, scheduler)
        let after = try #require(settled.devices[Self.keyboard.id]?[.filtered])
        #expect(after.count == 2)
        #expect(after.p50 < 1_000 && near(after.max, 3 * Self.ms), "\(after)")

        frames.onCompleted()                      // unplugged
        scheduler.advance(by: .zero)
        let gone = try latency(hub, scheduler)
        #expect(gone.devices.isEmpty)
        #expect(gone.total[.read]?.count == 2, "a removed device's ages stay in the totals")
        #expect(gone.total[.filtered]?.count == 2)
        #expect(near(gone.total[.filtered]?.summary.max ?? 0, 3 * Self.ms))
        running.dispose()
        scheduler.run()
    }

    @Test("the histogram: an age below 0 counts as 0, one above 60 s as 60 s; empty gives zeros")
    func histogramBounds() {
        var h = LatencyHistogram()
        #expect(h.summary == LatencySummary())
        h.record(-5)
        #expect(h.summary.count == 1 && h.summary.max == 0)
        h.record(3_600_000_000_000)
        #expect(h.summary.count == 2)
        #expect(near(h.summary.max, 60_000_000_000))
        var sum = LatencyHistogram()
        sum.add(h)
        sum.add(h)
        #expect(sum.count == 4)
    }

    @Test("runs of equal ages are counted before they reach the histogram: every reading includes the run being counted")
    func runsOfEqualAges() {
        var runs = LatencyHistogram(), plain = [UInt64]()
        let ages: [Int64] = [0, 0, 0, 2_000_000, 2_000_000, 0, -1, 9_000_000, 9_000_000, 9_000_000]
        for age in ages {
            runs.record(age)
            plain.append(UInt64(max(age, 0)))
        }
        // Read while the last run (three 9 ms ages) is still pending.
        #expect(runs.count == 10)
        let s = runs.summary
        #expect(s.count == 10)
        #expect(s.p50 < 1_000)                   // five of ten are 0 (the -1 included): below 1 µs
        #expect(near(s.p90, 9_000_000) && near(s.max, 9_000_000))
        // Reading does not lose the run: more of the same age, then a different one.
        runs.record(9_000_000)
        runs.record(1_000_000)
        #expect(runs.summary.count == 12)
        // `add` takes both sides' pending runs.
        var a = LatencyHistogram(), b = LatencyHistogram()
        a.record(5_000_000); a.record(5_000_000)
        b.record(7_000_000)
        a.add(b)
        #expect(a.count == 3 && a.summary.count == 3)
        #expect(near(a.summary.max, 7_000_000) && near(a.summary.p50, 5_000_000))
        #expect(b.count == 1)
    }

    @Test("a device's ages are noted on the twin's path and recorded after it: each exactly once, a reading includes the noted ones, a second note records the first")
    func notedAges() {
        let latency = DeviceLatency()
        latency.noteRead(1_000_000)
        latency.noteFiltered(2_000_000)
        #expect(latency.snapshot.read.count == 1 && latency.snapshot.filtered.count == 1)   // noted, read
        #expect(latency.read.count == 0)                                                    // not yet recorded
        latency.recordNoted()
        latency.recordNoted()                                                               // nothing twice
        #expect(latency.read.count == 1 && latency.filtered.count == 1)
        latency.noteRead(3_000_000)
        latency.noteRead(4_000_000)                                                         // a frame the filter held: no recordNoted between
        #expect(latency.read.count == 2 && latency.snapshot.read.count == 3)
        latency.recordNoted()
        #expect(latency.read.count == 3 && latency.filtered.count == 1)
        #expect(near(latency.read.summary.max, 4_000_000))
    }
}
