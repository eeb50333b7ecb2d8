import DeviceStreams
import InputModel
import Reactive

extension ReplaySource {
    /// The steps played in order on the scheduler, one timer slot for the whole replay.
    ///
    /// Touched only on the scheduler (`begin`, `stop`, timer fires), one call at a time, as a
    /// serial scheduler and the single timer slot guarantee; so, like the core's
    /// scheduler-confined state, without dynamic exclusivity checks.
    final class Player {
        let infos: [DeviceInfo]
        /// Every device's frames in one table, read through this `let`: a device's own table
        /// taken out of an array per frame was a copy, a retain and a release of both of its
        /// arrays per played frame.
        let frames: FrameTable
        /// Where each device's frames start in `frames`.
        let firstFrame: [Int]
        let steps: [Step]
        let scheduler: SchedulerType
        let speed: Double
        let loop: Bool
        let removeAtEnd: Bool
        let loopGap: Int64
        let streams = PublishSubject<DeviceStream>()
        let finished = BehaviorSubject<Bool>(value: false)
        let started = BehaviorSubject<Bool>(value: false)
        /// One subject per device and pass (a looping replay re-adds devices with fresh
        /// streams); replaced right before the device's stream is announced. Confined: the
        /// player sends only on the scheduler, and the hub subscribes and disposes there, so a
        /// frame passes no gate on its way to the filter stage (R1, docs/benchmarks.md).
        @exclusivity(unchecked) private var subjects: [ConfinedSubject<InputFrame>]
        @exclusivity(unchecked) private var cursor = 0
        @exclusivity(unchecked) private var origin: Int64 = 0
        /// Event time of recording time 0 in the current pass (`origin` on the first pass;
        /// later passes continue after the previous one's last event).
        @exclusivity(unchecked) private var eventOrigin: Int64 = 0
        @exclusivity(unchecked) private var timer: SchedulerTimer?
        @exclusivity(unchecked) private var generation: UInt64 = 0
        @exclusivity(unchecked) private var present: [Bool]
        /// `begin` ran and `started` is not sent yet.
        @exclusivity(unchecked) private var startPending = false
        /// The storage every played frame's events are written into: reused when the previous
        /// frame was not kept downstream (see `FrameTable.frame(_:shiftedBy:reusing:)`).
        @exclusivity(unchecked) private var frameBuffer: [InputEvent] = []

        init(infos: [DeviceInfo], frames: [FrameTable], steps: [Step], scheduler: SchedulerType,
             speed: Double, loop: Bool, removeAtEnd: Bool, loopGap: Int64) {
            self.infos = infos
            self.frames = FrameTable(joining: frames)
            firstFrame = FrameTable.firstFrames(frames)
            self.steps = steps
            self.scheduler = scheduler
            self.speed = speed
            self.loop = loop
            self.removeAtEnd = removeAtEnd
            self.loopGap = loopGap
            subjects = infos.map { _ in ConfinedSubject<InputFrame>() }
            present = infos.map { _ in false }
        }

        func begin() {
            origin = scheduler.now
            eventOrigin = origin
            cursor = 0
            // Strong: see `ReplaySource.player`; `stop` and the end of the replay invalidate it.
            timer = scheduler.makeTimer { token in self.fire(token) }
            startPending = true
            if !run() { announceStart() }
        }

        /// `hasStarted`, once what was due at the start is delivered (over several turns when
        /// that is more than one turn's budget: 1,500 devices at time 0).
        private func announceStart() {
            guard startPending else { return }
            startPending = false
            started.onNext(true)
        }

        func stop() {
            timer?.invalidate()
            timer = nil
            for d in infos.indices where present[d] {
                present[d] = false
                subjects[d].onCompleted()
            }
        }

        private func deadline(of step: Step) -> Int64 { mapTime(step.time) }

        /// Recording time → scheduler time.
        private func mapTime(_ t: Int64) -> Int64 {
            ReplaySource.scheduledTime(origin: origin, recorded: t, speed: speed)
        }

        private func fire(_ token: UInt64) {
            guard token == generation else { return }
            if !run() { announceStart() }
        }

        /// What one turn of `run` may deliver before it yields to the scheduler's other work:
        /// a frame weighs 1, an add or a removal (a device session made or ended downstream,
        /// two orders of magnitude dearer) `Self.hotPlugWeight`.
        static let turnBudget = 1024
        static let hotPlugWeight = 16

        /// Delivers the steps that are due, at most `turnBudget`'s worth, then arms the timer
        /// for the next one — or, when more are due, schedules the rest as a job of its own
        /// (and returns true: it yielded).
        /// Before, one turn delivered every due step: a session adding and removing devices
        /// 25,000 times at time 0 held the input thread for 24 s, and `LATENCY`, SIGTERM and
        /// the watchdog's round trip waited for it (issue #34). The order of the steps and their
        /// times are the same; other work due at the same time may now run between two
        /// batches, as it may between two frames of different times.
        private func run() -> Bool {
            let now = scheduler.now
            var budget = Self.turnBudget
            while cursor < steps.count {
                let step = steps[cursor]
                let due = deadline(of: step)
                if due > now {
                    generation &+= 1
                    timer?.arm(at: due, token: generation)
                    return false
                }
                if budget <= 0 {
                    generation &+= 1
                    let token = generation
                    // Strong, as the timer's handler: `stop` (timer nil) or a newer token ends it.
                    _ = scheduler.schedule { if self.timer != nil { self.fire(token) } }
                    return true
                }
                if case .frame = step.kind { budget -= 1 } else { budget -= Self.hotPlugWeight }
                cursor += 1
                switch step.kind {
                case .add:
                    present[step.device] = true
                    let subject = ConfinedSubject<InputFrame>()
                    subjects[step.device] = subject
                    streams.onNext(DeviceStream(info: infos[step.device], frames: subject.asObservable(),
                                                clock: SampleClock(origin: origin, speed: speed, sampleOrigin: eventOrigin)))
                case .frame(let i):
                    let frame = frames.frame(firstFrame[step.device] + i, shiftedBy: eventOrigin, reusing: &frameBuffer)
                    subjects[step.device].onNext(frame)
                case .remove:
                    guard present[step.device], loop || removeAtEnd else { continue }
                    present[step.device] = false
                    subjects[step.device].onCompleted()
                case .unplug:
                    guard present[step.device] else { continue }
                    present[step.device] = false
                    subjects[step.device].onCompleted()
                }
                if timer == nil { return false }   // stopped by a subscriber while delivering
            }
            if loop {
                // Saturating (issue #34): at --speed 0 passes of a recording decades long
                // follow each other at once, and their event times reach 2⁶³ ns after a few.
                eventOrigin = eventOrigin.addingSaturated(max(steps.last?.time ?? 0, now - origin).addingSaturated(loopGap))
                origin = now.addingSaturated(loopGap)
                cursor = 0
                generation &+= 1
                timer?.arm(at: origin, token: generation)
            } else {
                timer?.invalidate()   // nothing left to play: release the timer slot now
                timer = nil
                finished.onNext(true)
            }
            return false
        }
    }
}
