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

        init(filter: @escaping SensorHub.Filter = SensorHub.unfiltered) {
            hub = SensorHub(scheduler: scheduler, filter: filter)
            running = hub.run(sensors.asObservable())
            scheduler.advance(by: .zero)
        }

        func plug(_ info: SensorInfo) {
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
            sensors.onNext(SensorStream(info: info, samples: counted, removal: removal.asObservable()))
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
            #expect(rig.hub.state(of: Self.light.id.rawValue)
                    == .found(SensorState(info: Self.light, raw: SensorSample(time: 2, values: [120]),
                                          filtered: SensorSample(time: 2, values: [120]), live: true)))

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
            let rig = Rig(filter: { _, samples in samples.filter { $0.values[0] != 0 } })
            rig.plug(Self.light)
            let seen = PosixLockedList()
            let w = Self.watch(rig.hub, into: seen)
            rig.scheduler.advance(by: .zero)
            for (t, v) in [(1, 120.0), (2, 0), (3, 121)] { rig.samples.onNext(SensorSample(time: Int64(t), values: [v])) }
            #expect(seen.items.compactMap { if case .filtered(let s)? = $0 { s.values[0] } else { nil } } == [120, 121])
            #expect(seen.items.compactMap { if case .raw(let s)? = $0 { s.values[0] } else { nil } } == [120, 0, 121])
            w.dispose()
            rig.stop()
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
