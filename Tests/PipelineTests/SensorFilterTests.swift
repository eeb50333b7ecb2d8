import InputModel
import Pipeline
import Reactive
import ReactiveTesting
import Testing

/// `filterSensor` in virtual time; one tick = 1 ms and a sample's time is its tick in ns.
/// Outputs are shown as `value@tick` (one channel) — the worked examples of docs/sensors.md,
/// "Filters", are copied from these tests.
@Suite("filterSensor: sensor filters in virtual time", .ownLiveResources)
struct SensorFilterTests {
    static let lux = [SensorChannel(name: "illuminance", quantity: .illuminance)]

    /// A one-channel sample at `tick`.
    static func s(_ tick: TestTime, _ value: Double) -> Recorded<Event<SensorSample>> {
        .next(tick, SensorSample(time: Int64(tick) * ms, values: [value]))
    }

    /// Runs `settings` on one channel over `input` (subscribed at 200, disposed at
    /// `disposed`) and returns the output as `value@tick`, checking the sample times are
    /// the ticks they were delivered at, the subscription's interval, and that everything the
    /// run built is gone afterwards (live resources back to the baseline).
    static func run(_ channel: SensorChannelFilterSettings, minInterval: Int64 = 0,
                    _ input: [Recorded<Event<SensorSample>>], disposed: TestTime = 1000,
                    subscription: Subscription? = nil) -> [String] {
        let baseline = LiveResources.owned
        defer { #expect(LiveResources.owned == baseline) }
        return runOnce(channel, minInterval: minInterval, input, disposed: disposed, subscription: subscription)
    }

    private static func runOnce(_ channel: SensorChannelFilterSettings, minInterval: Int64,
                                _ input: [Recorded<Event<SensorSample>>], disposed: TestTime,
                                subscription: Subscription?) -> [String] {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable(input)
        let settings = SensorFilterSettings(channels: ["illuminance": channel], minInterval: minInterval)
        let observer = scheduler.start(disposed: disposed) {
            source.filterSensor(settings, channels: lux, scheduler: scheduler)
        }
        #expect(source.subscriptions == [subscription ?? Subscription(200, disposed)])
        return observer.events.map { recorded in
            switch recorded.value {
            case .next(let sample):
                #expect(sample.time == Int64(recorded.time) * ms, "delivered at its own time")
                return "\(format(sample.values[0]))@\(recorded.time)"
            case .completed: return "|@\(recorded.time)"
            case .error: return "#@\(recorded.time)"
            }
        }
    }

    static func format(_ v: Double) -> String {
        v == v.rounded() ? String(Int(v)) : String(v)
    }

    // MARK: hysteresis

    @Test("absolute hysteresis: a value within h of the last published one is dropped")
    func absoluteHysteresis() {
        let baseline = LiveResources.owned
        let out = Self.run(SensorChannelFilterSettings(hysteresis: 1),
                           [Self.s(210, 10), Self.s(220, 10.4), Self.s(230, 11), Self.s(240, 10.2), Self.s(250, 9.9)])
        #expect(out == ["10@210", "11@230", "9.9@250"])
        #expect(LiveResources.owned == baseline)
    }

    @Test("relative hysteresis is measured from the last published value, not the last sample")
    func relativeHysteresis() {
        let out = Self.run(SensorChannelFilterSettings(relativeHysteresis: 0.1),
                           [Self.s(210, 100), Self.s(220, 105), Self.s(230, 111), Self.s(240, 100), Self.s(250, 99.5)])
        // 111 is published (|111 − 100| ≥ 10); 100 is not (|100 − 111| = 11 < 11.1); 99.5 is.
        #expect(out == ["100@210", "111@230", "99.5@250"])
    }

    @Test("with both bands the larger applies: 1 lx near 0, 10 % above 10 lx")
    func bothBands() {
        let out = Self.run(SensorChannelFilterSettings(hysteresis: 1, relativeHysteresis: 0.1),
                           [Self.s(210, 0), Self.s(220, 0.5), Self.s(230, 1), Self.s(240, 50), Self.s(250, 54), Self.s(260, 56)])
        #expect(out == ["0@210", "1@230", "50@240", "56@260"])
    }

    // MARK: settling

    @Test("settle: a level is published once it has held, as the mean of its values; the first one too")
    func settleHolds() {
        let baseline = LiveResources.owned
        let out = Self.run(SensorChannelFilterSettings(hysteresis: 2, settle: 50 * ms),
                           [Self.s(210, 10), Self.s(300, 20), Self.s(320, 21), Self.s(340, 19)])
        #expect(out == ["10@260", "20@350"])
        #expect(LiveResources.owned == baseline)
    }

    @Test("settle: a level that goes back before it held is never published")
    func settleGoesBack() {
        let out = Self.run(SensorChannelFilterSettings(hysteresis: 1, settle: 50 * ms),
                           [Self.s(210, 10), Self.s(300, 20), Self.s(320, 10.5), Self.s(400, 10)])
        #expect(out == ["10@260"])
    }

    @Test("settle: a value outside the candidate's band starts a new candidate and the wait again")
    func settleRestarts() {
        let out = Self.run(SensorChannelFilterSettings(hysteresis: 1, settle: 50 * ms),
                           [Self.s(210, 10), Self.s(300, 20), Self.s(320, 30), Self.s(360, 30.5)])
        #expect(out == ["10@260", "30.25@370"])
    }

    @Test("settle: completion while a level settles completes at once; the level is dropped")
    func settleCompletion() {
        let out = Self.run(SensorChannelFilterSettings(hysteresis: 1, settle: 50 * ms),
                           [Self.s(210, 10), Self.s(300, 20), .completed(310)], subscription: Subscription(200, 310))
        #expect(out == ["10@260", "|@310"])
    }

    @Test("settle: disposal while a level settles: nothing fires afterwards")
    func settleDisposal() {
        let baseline = LiveResources.owned
        let out = Self.run(SensorChannelFilterSettings(hysteresis: 1, settle: 50 * ms),
                           [Self.s(210, 10), Self.s(300, 20)], disposed: 320)
        #expect(out == ["10@260"])
        #expect(LiveResources.owned == baseline)
    }

    @Test("an error is passed on at once; a held level is dropped")
    func errorDropsHeld() {
        let out = Self.run(SensorChannelFilterSettings(hysteresis: 1, settle: 50 * ms),
                           [Self.s(210, 10), Self.s(300, 20), .error(310, TestError(1))], subscription: Subscription(200, 310))
        #expect(out == ["10@260", "#@310"])
    }

    // MARK: rate limit

    @Test("rate limit: the first sample at once, then the latest of each window at its end")
    func rateLimit() {
        let baseline = LiveResources.owned
        let out = Self.run(.passthrough, minInterval: 100 * ms,
                           [Self.s(210, 1), Self.s(220, 2), Self.s(250, 3), Self.s(330, 4), Self.s(600, 5)])
        #expect(out == ["1@210", "3@310", "4@410", "5@600"])
        #expect(LiveResources.owned == baseline)
    }

    @Test("rate limit: a kept sample equal to the last delivered one is not delivered again")
    func rateLimitNoRepeat() {
        let out = Self.run(.passthrough, minInterval: 100 * ms, [Self.s(210, 1), Self.s(220, 2), Self.s(250, 1)])
        #expect(out == ["1@210"])
    }

    // MARK: outliers

    @Test("spike: a single sample beyond the bound is dropped")
    func spikeDropped() {
        let out = Self.run(SensorChannelFilterSettings(outliers: OutlierSettings(spike: 5)),
                           [Self.s(210, 10), Self.s(220, 50), Self.s(230, 10), Self.s(240, 11)])
        #expect(out == ["10@210", "11@240"])
    }

    @Test("spike: a step confirmed by the next sample is published one sample late")
    func stepConfirmed() {
        let out = Self.run(SensorChannelFilterSettings(outliers: OutlierSettings(spike: 5)),
                           [Self.s(210, 10), Self.s(220, 50), Self.s(230, 51)])
        #expect(out == ["10@210", "51@230"])
    }

    @Test("spike: with no next sample a held one is accepted after the confirm timeout")
    func spikeTimeout() {
        let out = Self.run(SensorChannelFilterSettings(outliers: OutlierSettings(spike: 5, confirmTimeout: 100 * ms)),
                           [Self.s(210, 10), Self.s(220, 50)])
        #expect(out == ["10@210", "50@320"])
    }

    @Test("phantom zero: a zero after a non-zero level is dropped unless zeros last the confirm time (1 s)")
    func phantomZero() {
        let settings = SensorChannelFilterSettings(outliers: OutlierSettings(phantomZero: true))
        #expect(Self.run(settings, [Self.s(210, 300), Self.s(220, 0), Self.s(230, 310)]) == ["300@210", "310@230"])
        // Real darkness: published once the zeros have lasted 1 s.
        #expect(Self.run(settings, [Self.s(210, 300), Self.s(220, 0), Self.s(230, 0)], disposed: 2000)
                    == ["300@210", "0@1220"])
        #expect(Self.run(settings, [Self.s(210, 300)] + (0...12).map { Self.s(220 + 100 * $0, 0) }, disposed: 2000)
                    == ["300@210", "0@1220"])   // the later zeros repeat the level
    }

    @Test("phantom zero: a phantom read several times (polled at 10 Hz for 0.7 s) is still one phantom")
    func phantomZeroPolledManyTimes() {
        let settings = SensorChannelFilterSettings(outliers: OutlierSettings(phantomZero: true))
        let zeros = (0..<7).map { Self.s(220 + 100 * $0, 0) }
        #expect(Self.run(settings, [Self.s(210, 300)] + zeros + [Self.s(920, 305)]) == ["300@210", "305@920"])
    }

    @Test("phantom zero: a zero with nothing after it is accepted after the confirm timeout")
    func phantomZeroTimeout() {
        let settings = SensorChannelFilterSettings(outliers: OutlierSettings(phantomZero: true, confirmTimeout: 300 * ms))
        #expect(Self.run(settings, [Self.s(210, 300), Self.s(220, 0)]) == ["300@210", "0@520"])
    }

    @Test("non-finite samples are dropped and change nothing")
    func nonFinite() {
        let out = Self.run(.passthrough, [Self.s(210, 1), Self.s(220, .nan), Self.s(230, .infinity), Self.s(240, 2)])
        #expect(out == ["1@210", "2@240"])
    }

    // MARK: smoothing

    @Test("moving mean over 3 samples (fewer while the window fills)")
    func movingMean() {
        let out = Self.run(SensorChannelFilterSettings(smoothing: .mean(3)),
                           [Self.s(210, 3), Self.s(220, 6), Self.s(230, 9), Self.s(240, 12)])
        #expect(out == ["3@210", "4.5@220", "6@230", "9@240"])
    }

    @Test("moving median over 3 samples removes a single spike")
    func movingMedian() {
        let out = Self.run(SensorChannelFilterSettings(smoothing: .median(3)),
                           [Self.s(210, 1), Self.s(220, 1), Self.s(230, 100), Self.s(240, 2), Self.s(250, 3)])
        #expect(out == ["1@210", "2@240", "3@250"])
    }

    // MARK: the chain and the sample

    @Test("outliers, smoothing, settle and rate limit in one chain")
    func wholeChain() {
        let settings = SensorChannelFilterSettings(outliers: OutlierSettings(phantomZero: true), hysteresis: 1,
                                                   relativeHysteresis: 0.1, settle: 100 * ms)
        let out = Self.run(settings, minInterval: 50 * ms,
                           [Self.s(210, 200), Self.s(250, 0), Self.s(300, 205), Self.s(350, 400),
                            Self.s(400, 404), Self.s(450, 398), Self.s(500, 401)])
        // 200 and 205 held 100 ms; the zero dropped; 400 and 404 held 100 ms; 398 in the band.
        #expect(out == ["202.5@310", "402@450"])
    }

    @Test("a sample carries every channel's published level; it comes when one of them changes")
    func twoChannels() {
        let scheduler = TestScheduler()
        let channels = [SensorChannel(name: "temp", quantity: .temp), SensorChannel(name: "humidityrelative", quantity: .humidityrelative)]
        let settings = SensorFilterSettings(channels: ["temp": SensorChannelFilterSettings(hysteresis: 0.5),
                                                       "humidityrelative": SensorChannelFilterSettings(hysteresis: 2)])
        let source = scheduler.createHotObservable([
            .next(210, SensorSample(time: 210 * ms, values: [20, 40])),
            .next(220, SensorSample(time: 220 * ms, values: [20.2, 41])),
            .next(230, SensorSample(time: 230 * ms, values: [20.6, 41])),
            .next(240, SensorSample(time: 240 * ms, values: [20.6, 43])),
            .next(250, SensorSample(time: 250 * ms, values: [20.6])),   // malformed: dropped
        ])
        let observer = scheduler.start { source.filterSensor(settings, channels: channels, scheduler: scheduler) }
        #expect(observer.elements.map(\.values) == [[20, 40], [20.6, 40], [20.6, 43]])
    }

    @Test("replay ahead of the timer: what settled before a sample is delivered before it, at its own time")
    func replayAheadOfTimer() {
        let baseline = LiveResources.owned
        do {
            let scheduler = TestScheduler()
            let subject = PublishSubject<SensorSample>()
            var out: [SensorSample] = []
            let settings = SensorFilterSettings(channels: ["illuminance": SensorChannelFilterSettings(hysteresis: 1, settle: 50 * ms)])
            let subscription = subject.filterSensor(settings, channels: Self.lux, scheduler: scheduler)
                .subscribe(onNext: { out.append($0) })
            // All at scheduler time 0, as a fast replay sends them.
            subject.onNext(SensorSample(time: 0, values: [10]))
            subject.onNext(SensorSample(time: 10 * ms, values: [20]))
            subject.onNext(SensorSample(time: 100 * ms, values: [40]))
            #expect(out == [SensorSample(time: 60 * ms, values: [20])])
            scheduler.advanceTo(1000)
            #expect(out.last == SensorSample(time: 150 * ms, values: [40]))
            subscription.dispose()
        }
        #expect(LiveResources.owned == baseline)
    }
}

extension SensorFilterTests {
    @Test("reload: a changed channel keeps its published level as the reference; an unchanged one keeps its state")
    func reload() {
        let baseline = LiveResources.owned
        do {
            let scheduler = TestScheduler()
            let channels = [SensorChannel(name: "temp", quantity: .temp), SensorChannel(name: "pressure", quantity: .pressure)]
            let before = SensorFilterSettings(channels: ["temp": SensorChannelFilterSettings(hysteresis: 1),
                                                         "pressure": SensorChannelFilterSettings(hysteresis: 1, settle: 50 * ms)])
            var after = before
            after.channels["temp"] = SensorChannelFilterSettings(hysteresis: 0.1)
            let source = scheduler.createHotObservable([
                .next(210, SensorSample(time: 210 * ms, values: [20, 100])),
                .next(300, SensorSample(time: 300 * ms, values: [20.5, 100])),   // temp inside 1: dropped
                .next(320, SensorSample(time: 320 * ms, values: [20, 102])),     // pressure settling
                .next(340, SensorSample(time: 340 * ms, values: [20.2, 102])),   // after the reload: 0.2 ≥ 0.1
            ])
            let updates = scheduler.createHotObservable([.next(330, after)])
            let observer = scheduler.start {
                source.filterSensor(before, channels: channels, scheduler: scheduler, settingsUpdates: updates.asObservable())
            }
            // The first levels settle at 260 (pressure has a settling time); pressure's
            // candidate of 320 survives the reload and settles at 370.
            #expect(observer.events.map(\.time) == [260, 340, 370])
            #expect(observer.elements.map(\.values) == [[20, 100], [20.2, 100], [20.2, 102]])
            #expect(updates.subscriptions == [Subscription(200, 1000)])
        }
        #expect(LiveResources.owned == baseline)
    }
}

/// The pure state machines one transition at a time (no scheduler).
@Suite("sensor filter state machines")
struct SensorStateMachineTests {
    @Test("OutlierGate: open → holding → confirmed, refuted or timed out")
    func gate() {
        var gate = OutlierGate(settings: OutlierSettings(spike: 5, phantomZero: true, confirmTimeout: 100))
        #expect(gate.on(TimedValue(10, at: 0)) == .init(accepted: TimedValue(10, at: 0)))
        #expect(gate.on(TimedValue(30, at: 10)) == .init())
        #expect(gate.held == TimedValue(30, at: 10) && gate.deadline == 110)
        // Refuted: the held spike is dropped and 11 is judged against 10.
        #expect(gate.on(TimedValue(11, at: 20)) == .init(accepted: TimedValue(11, at: 20)))
        #expect(gate.held == nil && gate.dropped == 1)
        // A phantom-zero suspect is confirmed only by another zero: 1 is within the spike bound
        // of the zero but does not confirm it, and is then itself a spike from 11.
        #expect(gate.on(TimedValue(0, at: 30)) == .init())
        #expect(gate.on(TimedValue(1, at: 35)) == .init())
        #expect(gate.held == TimedValue(1, at: 35))
        #expect(gate.on(TimedValue(9, at: 40)) == .init(accepted: TimedValue(9, at: 40)))
        #expect(gate.dropped == 3)
        // A run of zeros is one phantom-zero suspect: the zeros before its deadline keep it
        // held, a non-zero drops them all; a zero at the deadline confirms it, at the deadline.
        #expect(gate.on(TimedValue(0, at: 41)) == .init())
        #expect(gate.on(TimedValue(0, at: 60)) == .init() && gate.on(TimedValue(0, at: 100)) == .init())
        #expect(gate.held == TimedValue(0, at: 41))
        #expect(gate.on(TimedValue(9, at: 120)) == .init(accepted: TimedValue(9, at: 120)))
        #expect(gate.dropped == 6)
        #expect(gate.on(TimedValue(0, at: 130)) == .init() && gate.on(TimedValue(0, at: 200)) == .init())
        #expect(gate.on(TimedValue(0, at: 230)) == .init(confirmed: TimedValue(0, at: 230), accepted: TimedValue(0, at: 230)))
        #expect(gate.accepted == 0 && gate.held == nil && gate.dropped == 6)
        #expect(gate.on(TimedValue(9, at: 240)) == .init())   // a spike from 0, held
        #expect(gate.on(TimedValue(9, at: 245)) == .init(confirmed: TimedValue(9, at: 240), accepted: TimedValue(9, at: 245)))
        // Timed out: accepted at its deadline.
        #expect(gate.on(TimedValue(50, at: 50)) == .init())
        #expect(gate.fire(at: 149) == nil)
        #expect(gate.fire(at: 150) == TimedValue(50, at: 150))
        #expect(gate.accepted == 50 && gate.deadline == nil)
    }

    @Test("LevelPublisher: empty → settling → steady; back inside the band drops the candidate")
    func publisher() {
        var p = LevelPublisher(hysteresis: 2, relativeHysteresis: 0, settle: 50)
        #expect(p.on(10, at: 0) == nil)
        #expect(p.deadline == 50 && p.published == nil)
        #expect(p.on(11, at: 20) == nil)          // joins: inside 10's band
        #expect(p.fire(at: 50) == 10.5)           // the mean of what held
        #expect(p.on(20, at: 60) == nil && p.candidate?.first == 20)
        #expect(p.on(11, at: 70) == nil && p.candidate == nil && p.dropped == 1)
        #expect(p.fire(at: 1000) == nil)
        var now = LevelPublisher(hysteresis: 0, relativeHysteresis: 0, settle: 0)
        #expect(now.on(1, at: 0) == 1 && now.on(1, at: 1) == nil && now.on(1.5, at: 2) == 1.5)
    }

    @Test("Smoother: mean and median over the window, fewer while it fills")
    func smoother() {
        var median = Smoother(.median(4))
        #expect([4.0, 1, 3, 2, 10].map { median.on($0) } == [4, 2.5, 3, 2.5, 2.5])
        var off = Smoother(.off)
        #expect(off.on(7) == 7)
    }
}
