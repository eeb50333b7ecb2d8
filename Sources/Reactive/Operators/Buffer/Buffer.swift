extension ObservableType {
    /// Collects elements into arrays, emitted every `timeSpan` or as soon as `count` elements
    /// are collected, whichever comes first.
    ///
    /// - Element: an array of the elements collected in the current window. A window ends
    ///   after `timeSpan` — then the array is emitted even when it is empty, like RxSwift —
    ///   or when it holds `count` elements; a count-triggered emission restarts the timer, so
    ///   the next window is a full `timeSpan` long.
    /// - Completion: the current array is emitted (even when empty, like RxSwift), then
    ///   completion.
    /// - Error: passed on at once; the collected elements are dropped. A `count` below 1
    ///   fails at once with `RxError.argumentOutOfRange`.
    /// - Disposal: disposes the source and invalidates the timer; collected elements are
    ///   dropped and a tick in flight does nothing (it finds the subscription disposed).
    /// - Scheduler: timer emissions run on `scheduler`; one reusable timer slot per
    ///   subscription, armed at subscription.
    @inlinable
    public func buffer(timeSpan: RxTimeInterval, count: Int, scheduler: SchedulerType) -> Observable<[Element]> {
        let source = self
        return Observable { observer in
            guard count >= 1 else {
                observer.on(.error(RxError.argumentOutOfRange))
                return Disposables.create()
            }
            let sink = TimedSink(BufferMachine(downstream: observer, timeSpan: timeSpan.nanoseconds, count: count),
                                 scheduler: scheduler)
            sink.start()
            sink.setUpstream(source.subscribe(AnyObserver { sink.send($0) }))
            return sink
        }
    }
}

/// `buffer` as a `TimedMachine`: runs `BufferState` and performs its actions; the window
/// timer is armed at subscription.
@usableFromInline
struct BufferMachine<Element>: TimedOperatorMachine {
    @usableFromInline let downstream: AnyObserver<[Element]>
    @usableFromInline var state: BufferState<Element>
    /// The deadline the timer is armed for (windows follow each other from it).
    @usableFromInline var deadline: Int64 = 0

    @inlinable
    init(downstream: AnyObserver<[Element]>, timeSpan: Int64, count: Int) {
        self.downstream = downstream
        self.state = BufferState(timeSpan: timeSpan, count: count)
    }

    @inlinable
    mutating func start(_ sink: TimedSink<Self>) {
        deadline = sink.now + state.timeSpan
        sink.arm(at: deadline, token: state.generation)
    }

    @inlinable
    mutating func onTimer(_ token: UInt64, _ sink: TimedSink<Self>) {
        let action = state.onTick(token, deadline: deadline)
        perform(action, sink)
    }

    @inlinable @inline(__always)
    mutating func perform(_ action: BufferState<Element>.Action, _ sink: TimedSink<Self>) {
        switch action {
        case .none:
            break
        case .emit(let array, let next, let token):
            deadline = next
            sink.arm(at: next, token: token)
            downstream.on(.next(array))
        case .emitAndComplete(let array):
            downstream.on(.next(array))
            if sink.isDisposed { return }
            sink.stop(downstream, .completed)
        case .error(let error):
            sink.stop(downstream, .error(error))
        }
    }
}
