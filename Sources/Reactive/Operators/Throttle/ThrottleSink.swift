/// Runs `ThrottleState` behind a `SerialGate`: upstream events and timer ticks may arrive on
/// different threads; the gate makes them one serial stream without locks.
@usableFromInline
final class ThrottleSink<Element>: OperatorSink, @unchecked Sendable {
    @usableFromInline
    enum Message {
        case event(Event<Element>)
        case tick(UInt64)
        case dispose
    }

    @usableFromInline let gate = SerialGate<Message>()
    @usableFromInline let downstream: AnyObserver<Element>
    @usableFromInline let scheduler: SchedulerType
    // Touched only inside the gate.
    @usableFromInline @exclusivity(unchecked) var state: ThrottleState<Element>
    @usableFromInline @exclusivity(unchecked) var timer: SchedulerTimer?

    @inlinable
    init(downstream: AnyObserver<Element>, dueTime: Int64, latest: Bool, scheduler: SchedulerType) {
        self.downstream = downstream
        self.scheduler = scheduler
        self.state = ThrottleState(dueTime: dueTime, latest: latest)
        super.init()
    }

    @inlinable
    func on(_ event: Event<Element>) {
        gate.send(.event(event)) { self.handle($0) }
    }

    @usableFromInline
    override func disposeResources() {
        gate.send(.dispose) { self.handle($0) }
    }

    @inlinable
    func handle(_ message: Message) {
        let action: ThrottleState<Element>.Action
        switch message {
        case .event(.next(let element)):
            action = state.onNext(element, now: scheduler.now)
        case .event(.completed):
            action = state.onCompleted()
        case .event(.error(let error)):
            action = state.onError(error)
        case .tick(let token):
            action = state.onTick(token, now: scheduler.now)
        case .dispose:
            timer?.invalidate()
            timer = nil
            return
        }
        perform(action)
    }

    @inlinable
    func perform(_ action: ThrottleState<Element>.Action) {
        if isDisposed { return }
        switch action {
        case .none:
            break
        case .emit(let element):
            downstream.on(.next(element))
        case .emitAndDisarm(let element):
            timer?.disarm()
            downstream.on(.next(element))
        case .arm(let deadline, let token):
            if timer == nil {
                timer = scheduler.makeTimer { [weak self] token in
                    guard let self else { return }
                    self.gate.send(.tick(token)) { self.handle($0) }
                }
            }
            timer?.arm(at: deadline, token: token)
        case .emitAndComplete(let element):
            if let element { downstream.on(.next(element)) }
            downstream.on(.completed)
            dispose()
        case .error(let error):
            downstream.on(.error(error))
            dispose()
        }
    }
}
