/// The operator-specific half of a `TimedSink`: state and decisions, driven one message at a
/// time from inside the sink's gate.
///
/// A conforming type is a value type that holds the downstream observer and the operator's
/// state; it never sees threads, locks or the timer's lifetime. Every requirement is called
/// inside the gate and only while the sink is not disposed, so it may mutate freely and call
/// out (downstream, `sink.dispose()`, `sink.arm`): re-entrant sends from those calls are
/// queued by the gate and handled after the current message.
@usableFromInline
package protocol TimedMachine {
    /// What the sink's upstream(s) send: usually `Event<Element>`.
    associatedtype Input

    /// Called once by `TimedSink.start()`, before the upstream subscription (nothing can race
    /// yet): arm a timer that runs from subscription here.
    mutating func start(_ sink: TimedSink<Self>)

    /// One input, in order.
    mutating func on(_ input: Input, _ sink: TimedSink<Self>)

    /// The timer armed with `token` fired. The token may be stale (a fire already under way
    /// when the timer was re-armed): compare it (`sink.isCurrent`, or the state's own
    /// generation) before acting.
    mutating func onTimer(_ token: UInt64, _ sink: TimedSink<Self>)
}

extension TimedMachine {
    /// Nothing to start.
    @inlinable
    package mutating func start(_ sink: TimedSink<Self>) {}
}

/// The pure state of a timed operator (`ThrottleState`, `DebounceState`, `BufferState`): one
/// operation per kind of upstream event, each returning the action its machine performs.
@usableFromInline
package protocol TimedOperatorState {
    /// The upstream's elements.
    associatedtype Element
    /// What one operation decided (emit, arm, complete, ...).
    associatedtype Action

    /// An element at `now` (the scheduler's clock).
    mutating func onNext(_ element: Element, now: Int64) -> Action
    /// The upstream completed.
    mutating func onCompleted() -> Action
    /// The upstream failed.
    mutating func onError(_ error: any Error) -> Action
}

extension TimedOperatorState {
    /// The operation for `event`; `now` is read for an element only.
    @inlinable @inline(__always)
    package mutating func on(_ event: Event<Element>, now: @autoclosure () -> Int64) -> Action {
        switch event {
        case .next(let element): return onNext(element, now: now())
        case .completed: return onCompleted()
        case .error(let error): return onError(error)
        }
    }
}

/// A `TimedMachine` that runs a `TimedOperatorState` and performs the actions it decides:
/// each upstream event goes to the state's operation for it (throttle, debounce, buffer).
@usableFromInline
package protocol TimedOperatorMachine: TimedMachine where Input == Event<State.Element> {
    /// The operator's pure state.
    associatedtype State: TimedOperatorState
    /// The state, changed only through its operations.
    var state: State { get set }
    /// Does what `action` says (emit, arm the timer, end the stream).
    mutating func perform(_ action: State.Action, _ sink: TimedSink<Self>)
}

extension TimedOperatorMachine {
    /// One upstream event: the state's operation for it, then its action.
    @inlinable
    package mutating func on(_ event: Event<State.Element>, _ sink: TimedSink<Self>) {
        // The action is computed first: `perform(state.on(...), sink)` would copy the whole
        // machine per event (the call's base, self, is read before the argument that mutates it).
        let action = state.on(event, now: sink.now)
        perform(action, sink)
    }
}

/// The one skeleton of the core's timed operators (throttle, debounce, buffer, take(for:),
/// timeout) and of the noise-filter stage: a `SerialGate` through which upstream inputs,
/// timer ticks and disposal pass as one serial stream, one reusable `SchedulerTimer` slot armed
/// with generation tokens, and the `OperatorSink` disposal word.
///
/// - Inputs and ticks reach the machine only while the sink is not disposed; a tick is handed
///   over with its token, so a stale fire can be recognised.
/// - `dispose()` disposes the upstream first, then sends a dispose message through the gate:
///   the timer is invalidated (its handler released) by whichever thread is inside the gate,
///   never concurrently with the machine. A tick already in flight finds the sink disposed
///   and does nothing.
/// - The timer is created on first use and re-armed in place afterwards (no allocation per
///   arm). Its handler holds the sink weakly.
///
/// Generic over the machine, not an existential: the operators are `@inlinable`, so the
/// per-event path (`send` → gate → `handle` → the machine) is specialised at the use site.
@usableFromInline
package final class TimedSink<Machine: TimedMachine>: OperatorSink, @unchecked Sendable {
    @usableFromInline
    enum Message {
        case input(Machine.Input)
        case tick(UInt64)
        case dispose
    }

    @usableFromInline let gate = SerialGate<Message>()
    /// The scheduler whose clock and timer the machine uses.
    @usableFromInline package let scheduler: SchedulerType
    // Touched only inside the gate (and in start(), before anything can race).
    @usableFromInline @exclusivity(unchecked) var machine: Machine
    @usableFromInline @exclusivity(unchecked) var timer: SchedulerTimer?
    /// The sink's own token counter, for machines without a generation of their own.
    @usableFromInline @exclusivity(unchecked) var generation: UInt64 = 0

    /// A sink running `machine` on `scheduler`.
    @inlinable
    package init(_ machine: Machine, scheduler: SchedulerType) {
        self.machine = machine
        self.scheduler = scheduler
        super.init()
    }

    /// Lets the machine start (arm a timer from subscription); call before subscribing upstream.
    @inlinable
    package func start() {
        machine.start(self)
    }

    /// Hands `input` to the machine through the gate (from any thread). Consumed: it moves
    /// into the gate's message instead of being copied into it (and the copy destroyed) per
    /// input.
    @inlinable
    package func send(_ input: consuming Machine.Input) {
        gate.send(.input(input)) { self.handle($0) }
    }

    /// The scheduler's clock.
    @inlinable
    package var now: Int64 { scheduler.now }

    /// Arms the timer slot for `deadline` with `token`, replacing a pending deadline.
    @inlinable
    package func arm(at deadline: Int64, token: UInt64) {
        if timer == nil {
            timer = scheduler.makeTimer { [weak self] token in
                guard let self else { return }
                self.gate.send(.tick(token)) { self.handle($0) }
            }
        }
        timer?.arm(at: deadline, token: token)
    }

    /// Arms the timer slot for `deadline` with the sink's next token (see `isCurrent`).
    @inlinable
    package func arm(at deadline: Int64) {
        generation &+= 1
        arm(at: deadline, token: generation)
    }

    /// Whether `token` is the one of the latest `arm(at:)`: a tick with an older one is stale.
    @inlinable
    package func isCurrent(_ token: UInt64) -> Bool { token == generation }

    /// Sends `event` (`completed` or `error`) to `downstream` as the last event, then disposes
    /// the sink (the machine's stop rule, as `DownstreamSink.stop` is the gated sinks').
    @inlinable
    package func stop<Element>(_ downstream: AnyObserver<Element>, _ event: Event<Element>) {
        downstream.on(event)
        dispose()
    }

    /// Cancels the pending deadline, if any; the slot stays for the next arm.
    @inlinable
    package func disarm() {
        timer?.disarm()
    }

    /// Releases the timer for good (e.g. once a machine needs no more ticks).
    @inlinable
    package func invalidateTimer() {
        timer?.invalidate()
        timer = nil
    }

    @usableFromInline
    override func disposeResources() {
        gate.send(.dispose) { self.handle($0) }
    }

    @inlinable
    func handle(_ message: Message) {
        switch message {
        case .input(let input):
            if isDisposed { return }
            machine.on(input, self)
        case .tick(let token):
            if isDisposed { return }
            machine.onTimer(token, self)
        case .dispose:
            invalidateTimer()
        }
    }
}
