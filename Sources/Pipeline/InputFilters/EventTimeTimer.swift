import DeviceStreams
import Reactive

/// The timer of a filter that decides in event time (the noise filter's frame times, the
/// sensor filter's sample times), kept on the filter's next deadline: armed at the scheduler
/// time by which every input up to that deadline has come (`SampleClock`: the deadline itself
/// live; later on a replay slower than recorded), and re-armed only when the deadline changes,
/// not per input.
struct EventTimeTimer {
    /// Maps a deadline to the scheduler time the timer is armed for.
    let clock: SampleClock
    /// The deadline (event time) the timer is armed for, nil when disarmed.
    private(set) var deadline: Int64?

    /// A disarmed timer on `clock`.
    init(clock: SampleClock) { self.clock = clock }

    /// Keeps the timer armed for `next`, the filter's next deadline (nil: nothing due).
    mutating func follow<Machine: TimedMachine>(_ next: Int64?, _ sink: TimedSink<Machine>) {
        guard let next else {
            if deadline != nil { sink.disarm() }
            deadline = nil
            return
        }
        if next == deadline { return }
        deadline = next
        sink.arm(at: clock.schedulerTime(next))
    }

    /// A tick: the deadline it fires, which the timer no longer holds; nil for a stale tick
    /// (re-armed or disarmed since).
    mutating func take<Machine: TimedMachine>(_ token: UInt64, _ sink: TimedSink<Machine>) -> Int64? {
        guard sink.isCurrent(token), let due = deadline else { return nil }
        deadline = nil
        return due
    }
}

extension EventTimeTimer {
    /// The end of a timed machine's input: `stop` (completed or an error, never `next`) goes
    /// downstream as the same kind of event, and the machine's sink is disposed (its timer with
    /// it). What the machine still held is dropped: the stream it came from has ended.
    static func end<Machine: TimedMachine, In, Out>(_ stop: Event<In>, _ downstream: AnyObserver<Out>,
                                                      _ sink: TimedSink<Machine>) {
        switch stop {
        case .error(let error): downstream.on(.error(error))
        case .completed, .next: downstream.on(.completed)
        }
        sink.dispose()
    }
}
