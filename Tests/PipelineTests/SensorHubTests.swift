import DeviceStreams
import InputModel
import Pipeline
import Reactive
import ReactiveTesting
import Synchronization
import Testing

/// `SensorHub`: sensor sessions beside the devices', read only while consumed.
@Suite("SensorHub", .ownLiveResources)
struct SensorHubTests {
    static let light = SensorInfo(id: DeviceID(rawValue: "iio:light"), name: "als", sysname: "iio:device1",
                                  channels: [SensorChannel(name: "illuminance", quantity: .illuminance)], buffered: false)

    /// A hub over sensors the test drives; each sensor's samples count the subscriptions made
    /// to them (what reading the sensor would cost).
    final class Rig: @unchecked Sendable {
        let scheduler = VirtualTimeScheduler()
        let sensors = PublishSubject<SensorStream>()
        let hub: SensorHub
        let samples = PublishSubject<SensorSample>()
        let removal = PublishSubject<Never>()
        let counts = Counts()
        private var running: Disposable?

        init(filter: @escaping SensorHub.Filter = SensorHub.unfiltered,
             orientation: @escaping SensorHub.OrientationRule = { _ in nil }) {
            hub = SensorHub(scheduler: scheduler, filter: filter, orientation: orientation)
            running = hub.run(sensors.asObservable())
            scheduler.advance(by: .zero)
        }

        func plug(_ info: SensorInfo, readableOnce: Bool = false) {
            let samples = samples, counts = counts
            let counted = Observable<SensorSample>.create { observer in
                counts.subscriptions.add(1, ordering: .relaxed)
                counts.active.add(1, ordering: .relaxed)
                let s = samples.subscribe(observer)
                return Disposables.create {
                    s.dispose()
                    counts.active.subtract(1, ordering: .relaxed)
                }
            }
            sensors.onNext(SensorStream(info: info, samples: counted, removal: removal.asObservable(), readableOnce: readableOnce))
        }

        func stop() {
            running?.dispose()
            running = nil
            scheduler.advance(by: .zero)
        }
    }

    /// Subscribes every present sensor's updates, collecting them.
    static func watch(_ hub: SensorHub, into seen: PosixLockedList) -> Disposable {
        hub.feeds().flatMap { update -> Observable<SensorUpdate> in
            switch update {
            case .present(let feeds): Observable.merge(feeds.map(\.updates))
            case .added(let feed): feed.updates
            }
        }
        .subscribe(onNext: { seen.append($0) }, onCompleted: { seen.append(nil) })
    }

    @Test("a sensor is read only while something consumes it, once for all consumers; STATE keeps the last samples")
    func readOnlyWhileConsumed() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig()
            rig.plug(Self.light)
            #expect(rig.hub.sensors == [Self.light])
            rig.samples.onNext(SensorSample(time: 1, values: [5]))   // nobody reads it: not even subscribed
            #expect(rig.counts.subscriptions.load(ordering: .relaxed) == 0)
            #expect(rig.hub.state(of: "als") == .found(SensorState(info: Self.light, raw: nil, filtered: nil, live: false)))

            let first = PosixLockedList(), second = PosixLockedList()
            let a = Self.watch(rig.hub, into: first)
            let b = Self.watch(rig.hub, into: second)
            rig.scheduler.advance(by: .zero)   // the connection is made on the hub's scheduler
            #expect(rig.counts.subscriptions.load(ordering: .relaxed) == 1)
            rig.samples.onNext(SensorSample(time: 2, values: [120]))
            #expect(first.items == [.raw(SensorSample(time: 2, values: [120])), .filtered(SensorSample(time: 2, values: [120]))])
            #expect(second.items == first.items)
            var expected = SensorState(info: Self.light, raw: SensorSample(time: 2, values: [120]),
                                       filtered: SensorSample(time: 2, values: [120]), live: true)
            expected.samplesIn = 1   // the sample before anyone read it was never read
            expected.samplesOut = 1
            #expect(rig.hub.state(of: Self.light.id.rawValue) == .found(expected))

            a.dispose()
            rig.scheduler.advance(by: .zero)
            #expect(rig.counts.active.load(ordering: .relaxed) == 1)   // the other still reads it
            b.dispose()
            rig.scheduler.advance(by: .zero)
            #expect(rig.counts.active.load(ordering: .relaxed) == 0)   // the last consumer gone: reading stopped
            guard case .found(let state) = rig.hub.state(of: "als") else {
                Issue.record("the sensor is gone")
                return
            }
            #expect(!state.live)
            #expect(state.filtered == SensorSample(time: 2, values: [120]))   // the last value seen stays
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("the filter chain runs per sensor on its raw samples; raw and filtered are both passed on")
    func filterAppliedRawKept() {
        let baseline = LiveResources.owned
        do {
            // A stand-in filter: drops a phantom zero, passes the rest.
            let rig = Rig(filter: { _, samples, _ in samples.filter { $0.values[0] != 0 } })
            rig.plug(Self.light)
            let seen = PosixLockedList()
            let w = Self.watch(rig.hub, into: seen)
            rig.scheduler.advance(by: .zero)
            for (t, v) in [(1, 120.0), (2, 0), (3, 121)] { rig.samples.onNext(SensorSample(time: Int64(t), values: [v])) }
            #expect(seen.items.compactMap { if case .filtered(let s, _)? = $0 { s.values[0] } else { nil } } == [120, 121])
            #expect(seen.items.compactMap { if case .raw(let s)? = $0 { s.values[0] } else { nil } } == [120, 0, 121])
            w.dispose()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("an accelerometer's filtered samples carry the orientation they lead to; STATE has it")
    func orientationOnFilteredSamples() {
        let baseline = LiveResources.owned
        do {
            let accel = SensorInfo(id: DeviceID(rawValue: "iio:accel"), name: "accel_3d", sysname: "iio:device0",
                                   channels: ["accel_x", "accel_y", "accel_z"].map { SensorChannel(name: $0, quantity: .accel) },
                                   buffered: true)
            let rig = Rig(orientation: { $0.channels.count == 3 ? OrientationSettings() : nil })
            rig.plug(accel)
            let seen = PosixLockedList()
            let w = Self.watch(rig.hub, into: seen)
            rig.scheduler.advance(by: .zero)
            rig.samples.onNext(SensorSample(time: 1, values: [0, -9.81, 0]))   // upright: gravity along −y
            #expect(seen.items.last == .filtered(SensorSample(time: 1, values: [0, -9.81, 0]), orientation: "normal"))
            #expect(seen.items.first == .raw(SensorSample(time: 1, values: [0, -9.81, 0])))
            guard case .found(let state) = rig.hub.state(of: "accel_3d") else {
                Issue.record("no sensor")
                return
            }
            #expect(state.orientation == "normal")
            w.dispose()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("a held rotation: published when the hold ends, on its own, with the last levels at that time")
    func heldRotation() {
        let baseline = LiveResources.owned
        do {
            let accel = SensorInfo(id: DeviceID(rawValue: "iio:accel"), name: "accel_3d", sysname: "iio:device0",
                                   channels: ["accel_x", "accel_y", "accel_z"].map { SensorChannel(name: $0, quantity: .accel) },
                                   buffered: true)
            let second: Int64 = 1_000_000_000
            let rig = Rig(orientation: { _ in OrientationSettings(hold: second) })
            rig.plug(accel)
            let seen = PosixLockedList()
            let w = Self.watch(rig.hub, into: seen)
            rig.scheduler.advance(by: .zero)
            func orientation() -> String? {
                guard case .found(let state) = rig.hub.state(of: "accel_3d") else { return "none" }
                return state.orientation
            }
            rig.samples.onNext(SensorSample(time: 0, values: [0, -9.81, 0]))
            #expect(orientation() == "normal")                                   // the first one at once
            rig.samples.onNext(SensorSample(time: 100_000_000, values: [-9.81, 0, 0]))   // turned right-up
            #expect(seen.items.last == .filtered(SensorSample(time: 100_000_000, values: [-9.81, 0, 0]), orientation: "normal"))
            rig.scheduler.advance(by: .nanoseconds(Int(second) - 1))
            #expect(orientation() == "normal")
            rig.scheduler.advance(by: .nanoseconds(1))
            #expect(orientation() == "right-up")
            #expect(seen.items.last == .filtered(SensorSample(time: 1_100_000_000, values: [-9.81, 0, 0]), orientation: "right-up"))
            // A tilt and back within the hold is no rotation.
            let count = seen.items.count
            rig.samples.onNext(SensorSample(time: 1_200_000_000, values: [0, -9.81, 0]))
            rig.samples.onNext(SensorSample(time: 1_500_000_000, values: [-9.81, 0, 0]))
            rig.scheduler.advance(by: .seconds(2))
            #expect(orientation() == "right-up")
            #expect(seen.items.count == count + 4)                               // two raw, two filtered: nothing else
            w.dispose()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("a hub following the configuration runs its sensor filters, and a reload reaches the running chain")
    func configuredFiltersFollowReload() throws {
        let baseline = LiveResources.owned
        do {
            // A 10 lx band, no settling: 105 is inside it; after the reload (1 lx) 107 is a change.
            let wide = try FilterConfig.parse(yaml: "version: 1\nsensors:\n  defaults:\n    illuminance: { hysteresis: 10, settle: 0ms, outliers: { phantom_zero: off } }\n")
            let narrow = try FilterConfig.parse(yaml: "version: 1\nsensors:\n  defaults:\n    illuminance: { hysteresis: 1, settle: 0ms, outliers: { phantom_zero: off } }\n")
            let scheduler = VirtualTimeScheduler()
            let hub = DeviceHub(store: StateStore(), config: wide, scheduler: scheduler, latencyClock: .replay, filterSensors: true)
            let source = PublishSubject<SensorStream>()
            let samples = PublishSubject<SensorSample>()
            let running = hub.sensors.run(source.asObservable())
            scheduler.advance(by: .zero)
            source.onNext(SensorStream(info: Self.light, samples: samples.asObservable(), removal: .never()))
            let seen = PosixLockedList()
            let w = Self.watch(hub.sensors, into: seen)
            scheduler.advance(by: .zero)
            func filtered() -> [Double] { seen.items.compactMap { if case .filtered(let s, _)? = $0 { s.values[0] } else { nil } } }
            samples.onNext(SensorSample(time: 1, values: [100]))
            samples.onNext(SensorSample(time: 2, values: [105]))
            #expect(filtered() == [100])
            hub.reload(narrow)
            scheduler.advance(by: .zero)   // the reload is applied on the hub's scheduler
            samples.onNext(SensorSample(time: 3, values: [107]))
            #expect(filtered() == [100, 107])
            w.dispose()
            running.dispose()
            scheduler.advance(by: .zero)
        }
        #expect(LiveResources.owned == baseline)
    }

    @Test("removal ends the session and the watchers' feeds, whether or not the sensor was read")
    func removalEndsSession() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig()
            rig.plug(Self.light)
            var completed = false
            let w = rig.hub.feeds().subscribe(onNext: { update in
                guard case .present(let feeds) = update else { return }
                for feed in feeds { _ = feed.updates.subscribe(onCompleted: { completed = true }) }
            })
            rig.scheduler.advance(by: .zero)
            rig.removal.onCompleted()
            #expect(rig.hub.sensors.isEmpty)
            #expect(rig.hub.state(of: "als") == SensorLookup.none)
            #expect(completed)
            rig.scheduler.advance(by: .zero)
            #expect(rig.counts.active.load(ordering: .relaxed) == 0)
            w.dispose()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    /// Issue #35: a sensor announced again under the id of a present one (a re-plug whose
    /// removal has not come yet) closed the old session, but the session's inner sequence in
    /// `run`'s merge went on — its removal stayed subscribed, and the merge entry kept the
    /// session until the hub stopped. The device hub had this fix (issue #25); the sensor hub
    /// had its own copy of the registry without it.
    @Test("issue #35: a sensor replaced by a newer one of the same id ends its stale session while the hub runs: the old removal is unsubscribed, the old feed ends, the resources return")
    func staleSessionIsReleasedWhileTheHubRuns() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig()
            // Each removal counts its subscriptions: the stale one's must end.
            let first = PublishSubject<Never>(), second = PublishSubject<Never>()
            let firstCounts = Counts(), secondCounts = Counts()
            func counted(_ removal: PublishSubject<Never>, _ counts: Counts) -> Observable<Never> {
                Observable<Never>.create { observer in
                    counts.active.add(1, ordering: .relaxed)
                    let s = removal.subscribe(observer)
                    return Disposables.create {
                        s.dispose()
                        counts.active.subtract(1, ordering: .relaxed)
                    }
                }
            }
            let idle = LiveResources.owned   // the hub running, no sensor
            rig.sensors.onNext(SensorStream(info: Self.light, samples: .never(), removal: counted(first, firstCounts)))
            #expect(firstCounts.active.load(ordering: .relaxed) == 1)
            let oneSession = LiveResources.owned - idle
            #expect(oneSession > 0)
            var oldEnded = false
            var added: [DeviceID] = []
            var w: Disposable? = rig.hub.feeds().subscribe(onNext: { update in
                switch update {
                case .present(let feeds): for feed in feeds { _ = feed.ended.subscribe(onCompleted: { oldEnded = true }) }
                case .added(let feed): added.append(feed.info.id)
                }
            })

            rig.sensors.onNext(SensorStream(info: Self.light, samples: .never(), removal: counted(second, secondCounts)))
            #expect(rig.hub.sensorCount == 1)
            #expect(oldEnded, "the stale session's feed ended")
            #expect(added == [Self.light.id], "the newer session was announced")
            #expect(firstCounts.active.load(ordering: .relaxed) == 0, "the stale session's removal is no longer subscribed")
            #expect(secondCounts.active.load(ordering: .relaxed) == 1)
            w?.dispose()
            w = nil   // the subscription object itself is counted too
            #expect(LiveResources.owned - idle == oneSession, "the stale session's resources are gone, the new one's live")

            second.onCompleted()
            #expect(rig.hub.sensorCount == 0)
            #expect(secondCounts.active.load(ordering: .relaxed) == 0)
            #expect(LiveResources.owned == idle, "back to the running hub's baseline before it stops")
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }

    /// Issue #29: the D-Bus service follows sensors it does not read; the end came only
    /// through `updates`, whose subscription reads the sensor.
    @Test("a feed's ended tells the removal without reading the sensor; a late subscriber gets its completion")
    func endedWithoutReading() {
        let baseline = LiveResources.owned
        do {
            let rig = Rig()
            rig.plug(Self.light)
            var feed: SensorFeed?
            let w = rig.hub.feeds().subscribe(onNext: { update in
                if case .present(let feeds) = update { feed = feeds.first }
            })
            rig.scheduler.advance(by: .zero)
            var ends = 0, completed = false
            let e = feed?.ended.subscribe(onNext: { ends += 1 }, onCompleted: { completed = true })
            rig.scheduler.advance(by: .zero)
            #expect(ends == 0 && !completed)
            rig.removal.onCompleted()
            #expect(ends == 1 && completed)
            #expect(rig.counts.subscriptions.load(ordering: .relaxed) == 0)   // never read
            var late = false
            _ = feed?.ended.subscribe(onCompleted: { late = true })
            #expect(late)
            e?.dispose()
            w.dispose()
            rig.stop()
        }
        #expect(LiveResources.owned == baseline)
    }
}

/// How often a sensor's samples were subscribed, and how many subscriptions are open.
final class Counts: Sendable {
    let subscriptions = Atomic<Int>(0)
    let active = Atomic<Int>(0)
}

/// Updates collected from callbacks (`nil`: completed).
final class PosixLockedList: @unchecked Sendable {
    private let lock = Mutex<[SensorUpdate?]>([])
    func append(_ u: SensorUpdate?) { lock.withLock { $0.append(u) } }
    var items: [SensorUpdate?] { lock.withLock { $0 } }
}
