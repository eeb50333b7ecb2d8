import DeviceStreams
import InputModel
import Reactive
import Synchronization

/// Plays recordings as if their devices were plugged in: `devices` announces each device's
/// `DeviceStream`, its frames arrive at their recorded times, then the stream completes (the
/// device is removed) — so device scopes are exercised exactly as in live mode.
///
/// Time: recording time 0 maps to the scheduler's clock when the replay starts (`origin`).
/// A frame recorded at `t` is delivered at `origin + t / speed`, and carries the event time
/// `origin + t` whatever the speed (at speed 1 the two agree). The filters decide on event
/// time, and each device's stream says how its event times map to the scheduler's clock
/// (`DeviceStream.clock`, a `SampleClock` sharing `scheduledTime`'s mapping), so a noise
/// filter's window-end timer waits for the frames recorded inside the window even below
/// speed 1: a replay filters the same at any speed. On a
/// `VirtualTimeScheduler` the replay advances with the virtual clock (tests: an hour of
/// input in milliseconds, byte-identical every run); on a dispatch scheduler it paces in real
/// time (`speed` 1), faster (`speed` > 1) or as fast as possible (`speed` = .infinity).
///
/// All devices of plain recordings are added at the start (like devices present when the
/// daemon starts); such a device is removed right after its last frame (or, with
/// `removeAtEnd: false`, stays until the replay is stopped). Events after a recording's last
/// `SYN_REPORT` are not a complete frame and are not delivered (`droppedIncompleteEvents`).
///
/// Sessions (docs/formats/session.md) bring their own hot-plug: each `add:` announces a new
/// `DeviceStream` (one per appearance, with the device's id), and its `remove:` completes its
/// frames at its recorded time, whatever `removeAtEnd` says; a session's entries of one time
/// keep their file order. A session device still present at the end of its file is removed at
/// the file's last time as a plain recording's device is (`removeAtEnd`, `loop`). Events of an
/// appearance after its last `SYN_REPORT` are dropped (counted as above).
///
/// Several recordings and sessions play together on one time base; a device whose id an
/// earlier device of the replay already has gets the first free `#2`, `#3`... suffix on its id
/// (`DeviceID.distinct`, the rule live devices follow too). One reusable timer slot drives
/// the whole replay; steps due at once are delivered in bounded batches, each a job of its
/// own, so the scheduler's other work runs between them (`Player.turnBudget`).
public final class ReplaySource: @unchecked Sendable {
    /// Counts this object in `LiveResources` until it is destroyed.
    private let live = LiveResources.Token()
    enum StepKind {
        case add
        case frame(Int)
        /// The end of a plain recording (or of a session file): removes when `loop || removeAtEnd`.
        case remove
        /// A session's `remove:`: always removes.
        case unplug
    }

    struct Step {
        let time: Int64
        let device: Int
        let kind: StepKind
    }

    /// A step with its rank among steps of the same time (see `ordered`).
    struct Ranked {
        let step: Step
        let rank: Int

        init(_ step: Step, rank: Int) {
            self.step = step
            self.rank = rank
        }

        /// Whether `self` plays before `other` whatever the order they were made in: an
        /// earlier time, or the same time and a lower rank.
        func sortsBefore(_ other: Ranked) -> Bool {
            step.time != other.step.time ? step.time < other.step.time : rank < other.rank
        }

        /// The steps of all `lists` in play order: by time, then rank, then the order they
        /// were made in (list by list, each in its own order) — a stable sort of the
        /// concatenation. Each list is normally in order already (recordings and sessions are
        /// in time order), so the lists are merged pairwise, O(n log lists); a list out of
        /// order (times going backwards) makes it fall back to the stable sort.
        static func ordered(_ lists: [[Ranked]]) -> [Step] {
            let inOrder = lists.allSatisfy { list in zip(list, list.dropFirst()).allSatisfy { !$1.sortsBefore($0) } }
            guard inOrder else {
                return lists.joined().enumerated().sorted { a, b in
                    a.element.sortsBefore(b.element) || (!b.element.sortsBefore(a.element) && a.offset < b.offset)
                }.map(\.element.step)
            }
            // Adjacent pairs merged round by round: the left list holds only earlier sources,
            // so a tie taken from the left keeps the order a stable sort would give.
            var runs = lists
            while runs.count > 1 {
                var next: [[Ranked]] = []
                next.reserveCapacity((runs.count + 1) / 2)
                for i in stride(from: 0, to: runs.count, by: 2) {
                    next.append(i + 1 < runs.count ? merge(runs[i], runs[i + 1]) : runs[i])
                }
                runs = next
            }
            return (runs.first ?? []).map(\.step)
        }

        private static func merge(_ left: [Ranked], _ right: [Ranked]) -> [Ranked] {
            var out: [Ranked] = []
            out.reserveCapacity(left.count + right.count)
            var i = 0, j = 0
            while i < left.count, j < right.count {
                if !right[j].sortsBefore(left[i]) {
                    out.append(left[i]); i += 1
                } else {
                    out.append(right[j]); j += 1
                }
            }
            out.append(contentsOf: left[i...])
            out.append(contentsOf: right[j...])
            return out
        }
    }

    /// The devices as they will be announced (a session device once, however often it comes).
    public let infos: [DeviceInfo]
    /// Events dropped because they followed the last `SYN_REPORT` of their recording (or of
    /// their appearance, in a session).
    public let droppedIncompleteEvents: Int

    private let scheduler: SchedulerType
    private let started = Atomic<Bool>(false)
    /// The play state. An object of its own, never referenced weakly: the timer that drives
    /// it holds it strongly while it plays (the cycle ends when the replay ends or stops). A
    /// weak reference would give it a side table and put every retain of it — one per timer
    /// fire, several per frame — on the slow path; this façade is what closures hold weakly.
    private let player: Player

    /// Prepares a replay of `recordings` and `sessions` on `scheduler`.
    ///
    /// - Parameters:
    ///   - speed: 1 = recorded pace, 2 = twice as fast, `.infinity` = no waiting.
    ///   - loop: start again (devices re-added) `loopGap` after the end.
    ///   - removeAtEnd: without `loop`, remove each device right after its last frame (the
    ///     default, as tests want it); when false the devices stay present — last state
    ///     queryable, values held for a window's end still delivered — until the replay is
    ///     stopped (its `devices` subscription disposed), which completes their frames.
    ///     A session's `remove:` lines remove their device either way.
    public init(recordings: [Recording] = [], sessions: [Session] = [], scheduler: SchedulerType,
                speed: Double = 1, loop: Bool = false,
                loopGap: RxTimeInterval = .seconds(1), removeAtEnd: Bool = true) {
        precondition(speed > 0, "replay speed must be positive")
        self.scheduler = scheduler
        var infos: [DeviceInfo] = []
        var framesPerDevice: [FrameTable] = []
        var dropped = 0
        // Ids are distinct over the whole replay (a replayed device's id is never given to
        // another one, even after its removal), by the live daemon's rule.
        var taken: Set<DeviceID> = []
        func announce(_ info: DeviceInfo) {
            var info = info
            info.id = info.id.distinct(isTaken: taken.contains)
            taken.insert(info.id)
            infos.append(info)
        }
        for recording in recordings {
            for device in recording.devices {
                announce(device.info)
                let table = FrameTable(grouping: device.events)
                dropped += table.incompleteEvents
                framesPerDevice.append(table)
            }
        }
        // Each source's steps: a plain recording device's add, frames and end; a session's
        // timeline. The replay's order is by time, then rank (a plain recording's adds first
        // and its ends last at their time), then the order the steps were made in.
        var lists: [[Ranked]] = []
        for (d, table) in framesPerDevice.enumerated() {
            var steps: [Ranked] = []
            steps.reserveCapacity(table.ends.count + 2)
            steps.append(Ranked(Step(time: 0, device: d, kind: .add), rank: 0))
            for (i, end) in table.ends.enumerated() { steps.append(Ranked(Step(time: end.time, device: d, kind: .frame(i)), rank: 1)) }
            steps.append(Ranked(Step(time: table.ends.last?.time ?? 0, device: d, kind: .remove), rank: 2))
            lists.append(steps)
        }
        for session in sessions {
            let first = infos.count
            for device in session.devices {
                announce(device.info)
                framesPerDevice.append(FrameTable())
            }
            var steps: [Ranked] = []
            // The timeline's own order; frames end at their SYN_REPORT.
            var pending = [[InputEvent]](repeating: [], count: session.devices.count)
            var present = [Bool](repeating: false, count: session.devices.count)
            for entry in session.timeline {
                let d = first + entry.device
                switch entry.action {
                case .add:
                    present[entry.device] = true
                    pending[entry.device] = []
                    steps.append(Ranked(Step(time: entry.time, device: d, kind: .add), rank: 1))
                case .event(let type, let code, let value):
                    let event = InputEvent(time: entry.time, type: type, code: code, value: value)
                    guard event.isSynReport else {
                        pending[entry.device].append(event)
                        continue
                    }
                    framesPerDevice[d].append(time: entry.time, events: pending[entry.device])
                    pending[entry.device] = []
                    steps.append(Ranked(Step(time: entry.time, device: d, kind: .frame(framesPerDevice[d].ends.count - 1)), rank: 1))
                case .remove:
                    present[entry.device] = false
                    dropped += pending[entry.device].count
                    pending[entry.device] = []
                    steps.append(Ranked(Step(time: entry.time, device: d, kind: .unplug), rank: 1))
                }
            }
            let end = session.timeline.last?.time ?? 0
            for device in session.devices.indices where present[device] {
                dropped += pending[device].count
                steps.append(Ranked(Step(time: end, device: first + device, kind: .remove), rank: 1))
            }
            lists.append(steps)
        }
        self.infos = infos
        droppedIncompleteEvents = dropped
        player = Player(infos: infos, frames: framesPerDevice, steps: Ranked.ordered(lists), scheduler: scheduler,
                        speed: speed, loop: loop, removeAtEnd: removeAtEnd, loopGap: loopGap.nanoseconds)
    }

    /// One stream per device and appearance (per pass, when looping), in the replay's order;
    /// its frames complete when the replay removes the device. `frames` may be subscribed any number of
    /// times, from the handler that receives the stream or later on the scheduler — never from
    /// another thread while the scheduler runs: a device's frames are a `ConfinedSubject`'s,
    /// which has no gate (it is hot: frames delivered before a subscription are not repeated). The first subscription starts the replay (on the
    /// scheduler); disposing it stops the replay and completes the devices still present.
    /// Once started, the replay plays until it ends or is stopped that way, even when this
    /// object is no longer referenced.
    public var devices: Observable<DeviceStream> {
        Observable.create { [weak self] observer in
            guard let self else {
                observer.onCompleted()
                return Disposables.create()
            }
            let subscription = self.player.streams.subscribe(observer)
            if !self.started.exchange(true, ordering: .acquiringAndReleasing) {
                self.scheduler.schedule { [weak self] in self?.player.begin() }
            }
            // The stop holds the player itself, not this façade: a replay that has begun plays
            // on without the façade, so a stop reaching it only through the façade would be
            // lost when the façade goes right after the disposal.
            let player = self.player, scheduler = self.scheduler
            return Disposables.create {
                subscription.dispose()
                scheduler.schedule { player.stop() }
            }
        }
    }

    /// Emits `true` once the replay has played everything (never, when looping).
    public var isFinished: Observable<Bool> { player.finished.asObservable() }

    /// Emits once, on the scheduler, when the replay has begun and delivered what is due at
    /// its start (the devices present at time 0, added; at once for a late subscriber): the
    /// moment its input is ready.
    public var hasStarted: Observable<Void> { player.started.filter { $0 }.take(1).map { _ in () } }
}

extension ReplaySource {
    /// When a frame recorded at `t` is delivered: `origin + t / speed`, in whole nanoseconds,
    /// saturating at `Int64`'s bounds. A slow pace stretches a long recording beyond what
    /// `Int64` holds (the frame is then due "never"), which must not trap (issue #25).
    /// The same mapping as the replay's streams' `SampleClock`, so the noise filter's timers
    /// and the frames they wait for agree on it.
    public static func scheduledTime(origin: Int64, recorded t: Int64, speed: Double) -> Int64 {
        SampleClock(origin: origin, speed: speed).deliveryTime(recorded: t)
    }
}
