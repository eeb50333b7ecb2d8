import DeviceStreams
import InputModel
import Reactive
import Synchronization

/// Plays sensor recordings (docs/formats/sensors.md) as if their sensors were present: when
/// `sensors` is subscribed, every sensor is announced as a `SensorStream`, and its samples
/// come at their recorded times on the scheduler (virtual time in tests), with the sample
/// time `origin + t` whatever the speed, as `ReplaySource` does for frames. Each stream's
/// `clock` says so (`SampleClock(origin:speed:)`), so the filters' timers wait for the
/// samples recorded before their deadlines and a replay filters the same at any speed.
///
/// A sensor's samples are hot, like a real sensor's: a sample falls due whether or not
/// anyone reads the sensor, and reaches only those subscribed at that moment. Each sensor is
/// removed (its `removal` and `samples` complete) after the last sample of the replay when
/// `removeAtEnd`, otherwise when the `sensors` subscription is disposed.
public final class SensorReplaySource: @unchecked Sendable {
    private let recordings: [SensorRecording]
    private let scheduler: SchedulerType
    private let speed: Double
    private let removeAtEnd: Bool

    /// The sensors as they are announced (a `#2` suffix on a repeated id, as for devices).
    public let infos: [SensorInfo]

    /// A replay of `recordings` on `scheduler`; `speed` as for `ReplaySource`.
    public init(recordings: [SensorRecording], scheduler: SchedulerType, speed: Double = 1, removeAtEnd: Bool = true) {
        precondition(speed > 0, "replay speed must be positive")
        self.recordings = recordings
        self.scheduler = scheduler
        self.speed = speed
        self.removeAtEnd = removeAtEnd
        var seen: [DeviceID: Int] = [:]
        var infos: [SensorInfo] = []
        for recording in recordings {
            for var info in recording.sensors {
                let n = (seen[info.id] ?? 0) + 1
                seen[info.id] = n
                if n > 1 { info.id = DeviceID(rawValue: info.id.rawValue + "#\(n)") }
                infos.append(info)
            }
        }
        self.infos = infos
    }

    /// The sensors, announced at once on subscription (on the scheduler); disposing stops the
    /// replay and removes the sensors still present.
    public var sensors: Observable<SensorStream> {
        let infos = infos, scheduler = scheduler, speed = speed, removeAtEnd = removeAtEnd
        // Every sample of every recording, by time (stable: file order within one time).
        var steps: [(time: Int64, sensor: Int, sample: SensorSample)] = []
        var offset = 0
        for recording in recordings {
            for e in recording.entries { steps.append((e.sample.time, offset + e.sensor, e.sample)) }
            offset += recording.sensors.count
        }
        let ordered = steps.enumerated().sorted { ($0.element.time, $0.offset) < ($1.element.time, $1.offset) }.map(\.element)
        return Observable<SensorStream>.create { observer in
            let samples = infos.map { _ in PublishSubject<SensorSample>() }
            let removals = infos.map { _ in PublishSubject<Never>() }
            let timer = SerialDisposable()
            let removed = Atomic<Bool>(false)
            func removeAll() {
                guard !removed.exchange(true, ordering: .acquiringAndReleasing) else { return }
                for s in samples { s.onCompleted() }
                for r in removals { r.onCompleted() }
            }
            let origin = scheduler.now
            let clock = SampleClock(origin: origin, speed: speed)
            for (i, info) in infos.enumerated() {
                observer.onNext(SensorStream(info: info, samples: samples[i].asObservable(), removal: removals[i].asObservable(),
                                             clock: clock))
            }
            // One step at a time: each fire delivers what is due and arms the next.
            func play(from index: Int) {
                var i = index
                while i < ordered.count {
                    let step = ordered[i]
                    let due = clock.deliveryTime(recorded: step.time)
                    if due > scheduler.now {
                        timer.disposable = scheduler.schedule(after: .init(nanoseconds: due - scheduler.now)) { play(from: i) }
                        return
                    }
                    var sample = step.sample
                    // Saturating: a recording's times are below 2⁶¹ ns, but a clock started
                    // late plus a built (unparsed) recording's time must not trap (issue #34).
                    sample.time = origin.addingSaturated(step.time)
                    samples[step.sensor].onNext(sample)
                    i += 1
                }
                if removeAtEnd {
                    removeAll()
                    observer.onCompleted()
                }
            }
            play(from: 0)
            return Disposables.create {
                timer.dispose()
                removeAll()
            }
        }
        .subscribe(on: scheduler)
    }
}
