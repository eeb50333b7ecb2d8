import Reactive

/// An orientation and the time it took effect (sample time, nanoseconds).
public struct TimedOrientation: Hashable, Sendable {
    /// The orientation.
    public var orientation: Orientation
    /// When: the time of the sample that decided it, or, for a change that was held, that
    /// time plus the hold.
    public var time: Int64

    /// An orientation at `time`.
    public init(_ orientation: Orientation, at time: Int64) {
        self.orientation = orientation
        self.time = time
    }
}

extension ObservableType where Element == TimedOrientation {
    /// Publishes a change of orientation only once it has lasted `hold()` on `scheduler`: the
    /// rotation hold users of iio-sensor-proxy ask for (its issues #90 and #220: a laptop
    /// tilted for a moment rotates the screen and stays rotated).
    ///
    /// - The first orientation, and `.undefined` (the rule was turned off), pass at once:
    ///   a desktop starting up wants an orientation, not a wait.
    /// - A later change is held: it is published `hold()` after it came (with its time plus
    ///   the hold) unless another change comes first. A change back to the published
    ///   orientation cancels the held one (nothing is published: a tilt and back is no
    ///   rotation); a change to a third one is held anew from its own time.
    /// - `hold()` is read when a change comes (so a reload applies to the next change); 0 or
    ///   less passes every change at once.
    /// - Completion and error pass at once; a held change is dropped. Disposal cancels the
    ///   timer.
    public func holdingChanges(scheduler: SchedulerType, hold: @escaping @Sendable () -> Int64) -> Observable<TimedOrientation> {
        let source = asObservable()
        return Observable.create { observer in
            let state = OrientationHoldState()
            let timer = SerialDisposable()
            let subscription = source.subscribe(
                onNext: { next in
                    let wait = hold()
                    switch state.offer(next, holding: wait > 0) {
                    case .publish: observer.onNext(next)
                    case .cancel: timer.disposable = Disposables.create()
                    case .hold(let generation):
                        timer.disposable = scheduler.schedule(after: RxTimeInterval(nanoseconds: wait)) {
                            let timed = TimedOrientation(next.orientation, at: next.time &+ wait)
                            if state.fire(generation, publishing: timed) { observer.onNext(timed) }
                        }
                    }
                },
                onError: { error in
                    timer.dispose()
                    observer.onError(error)
                },
                onCompleted: {
                    timer.dispose()
                    observer.onCompleted()
                })
            return Disposables.create {
                subscription.dispose()
                timer.dispose()
            }
        }
    }
}

/// What `holdingChanges` remembers: the published orientation and the generation of the held
/// change, under one lock (the timer may fire on the scheduler while a sample comes).
private final class OrientationHoldState: @unchecked Sendable {
    enum Decision {
        case publish
        case cancel
        case hold(UInt64)
    }

    private struct State {
        var published: Orientation?
        var generation: UInt64 = 0
    }

    private let state = PosixLocked(State())

    func offer(_ next: TimedOrientation, holding: Bool) -> Decision {
        state.withLock { s in
            s.generation &+= 1
            if s.published == nil || next.orientation == .undefined || !holding {
                s.published = next.orientation == .undefined ? nil : next.orientation
                return .publish
            }
            return next.orientation == s.published ? .cancel : .hold(s.generation)
        }
    }

    /// Whether the held change of `generation` is still the latest; it becomes the published one.
    func fire(_ generation: UInt64, publishing timed: TimedOrientation) -> Bool {
        state.withLock { s in
            guard s.generation == generation else { return false }
            s.published = timed.orientation
            return true
        }
    }
}
