import Synchronization

extension ObservableType {
    /// Delivers every event on `scheduler`, in order.
    ///
    /// - Element, completion, error: delivered on `scheduler`, one at a time, in the order
    ///   received. Events sent from several threads at once (a source that breaks the grammar)
    ///   are all delivered, serially, each thread's in the order it sent them; an event sent
    ///   after another returned comes after it. After a stop event the source is disposed and
    ///   nothing more is delivered.
    /// - Hand-off: events go into a lock-free bounded ring (`TicketRing`, 1024 events); one
    ///   drain job is scheduled while the ring is non-empty, and it delivers everything queued
    ///   (including events that arrive while it runs) before it ends. A burst of N events
    ///   costs one scheduled job, not N — this is what beats one `DispatchQueue.async` per
    ///   event. A job that runs dry polls the ring for up to 10 µs before it ends, so a sender
    ///   about as fast as the subscriber keeps one job going instead of scheduling one every
    ///   few events. Queueing an event allocates nothing while the ring has room.
    /// - Full ring: when 1024 events are already waiting, a sender waits (polling for 50 µs,
    ///   then sleeping 20 µs between polls) for the drain job to free a slot, as long as the
    ///   drain job keeps delivering. The event goes into an overflow node (one allocation)
    ///   instead when the sender is the drain job itself (a send from inside `onNext`), or when
    ///   nothing has been delivered for 10 ms (the drain job is not running: not started yet,
    ///   its scheduler busy — perhaps with this very sender); until the next delivery, further
    ///   senders that find the ring full then overflow at once. No event is lost or reordered
    ///   and nothing deadlocks; a sender waits at most 10 ms per stall of the drain job.
    /// - Disposal: disposes the source; queued events are dropped, and a drain job in flight
    ///   stops before the next event (also when disposed from inside `onNext`).
    /// - Serial even on a concurrent scheduler: at most one drain job exists at a time.
    @inlinable
    public func observeOn(_ scheduler: ImmediateSchedulerType) -> Observable<Element> {
        observeOn(scheduler, ringCapacity: observeOnRingCapacity)
    }

    /// `observeOn` under the name newer RxSwift uses.
    @inlinable
    public func observe(on scheduler: ImmediateSchedulerType) -> Observable<Element> {
        observeOn(scheduler)
    }

    /// `observeOn` with a ring of `ringCapacity` events (rounded up to a power of two, at
    /// least 2); tests use small rings to exercise the overflow path.
    @inlinable
    func observeOn(_ scheduler: ImmediateSchedulerType, ringCapacity: Int) -> Observable<Element> {
        let source = self
        return Observable { observer in
            let sink = ObserveOnSink(downstream: observer, scheduler: scheduler, ringCapacity: ringCapacity)
            sink.setUpstream(source.subscribe(AnyObserver { sink.on($0) }))
            return sink
        }
    }
}

/// How long a drain job that ran out of events polls for more before it ends (10 µs).
@usableFromInline let observeOnLingerTime: Int64 = 10_000

/// Events `observeOn` queues before further senders wait (or overflow into allocated nodes).
@usableFromInline let observeOnRingCapacity = 1024

@usableFromInline
final class ObserveOnSink<Element>: OperatorSink, @unchecked Sendable {
    @usableFromInline let queue: TicketRing<Event<Element>>
    /// Events queued and not yet accounted for by the drain job; the sender that moves it
    /// from 0 schedules the job.
    @usableFromInline let wip = IsolatedCounter(0)
    @usableFromInline let downstream: AnyObserver<Element>
    @usableFromInline let scheduler: ImmediateSchedulerType

    @inlinable
    init(downstream: AnyObserver<Element>, scheduler: ImmediateSchedulerType, ringCapacity: Int) {
        self.queue = TicketRing(capacity: ringCapacity)
        self.downstream = downstream
        self.scheduler = scheduler
        super.init()
    }

    @inlinable
    func on(_ event: Event<Element>) {
        queue.push(event)
        if wip.increment() == 0 {
            scheduler.schedule { self.drain() }
        }
    }

    /// The drain job: delivers (or, once disposed, drops) queued events until every counted
    /// event is accounted for. A ticket whose sender has not stored its event yet ends a pass
    /// early; that sender's count makes the loop (or a new job) look again.
    @inlinable
    func drain() {
        var missed = 1
        queue.beginConsuming()
        defer { queue.endConsuming() }
        repeat {
            repeat {
                while let event = queue.pop() {
                    if isDisposed { continue }
                    downstream.on(event)
                    if event.isStopEvent { dispose() }
                }
            } while lingerForNext()
            missed = wip.subtract(missed)
        } while missed != 0
    }

    /// After the ring ran dry: polls it for up to `lingerTime` and returns whether an event
    /// arrived meanwhile. A sender about as fast as the subscriber would otherwise make the
    /// drain job end and be scheduled again every few events, and each scheduled job
    /// allocates (its closure, the scheduler's disposable and dispatch block).
    @usableFromInline
    func lingerForNext() -> Bool {
        if isDisposed { return false }
        let start = monotonicNow()
        var polls = 0
        while !queue.nextMayBeReady {
            polls += 1
            if polls & 63 == 0 && monotonicNow() - start >= observeOnLingerTime { return false }
        }
        return true
    }
}
