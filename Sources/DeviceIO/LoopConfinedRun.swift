import Reactive

/// One subscription's work confined to an `InputLoop` thread, such as a monitor's udev socket
/// and the devices it follows. `start` and `stop` run on the loop thread only.
package protocol LoopConfinedRun: AnyObject, Sendable {
    /// Sets the work up; reports failures to the subscriber itself.
    func start()
    /// Releases everything the run holds; called once, also after a failed `start`.
    func stop()
}

extension InputLoop {
    /// Runs `work` on the loop thread: at once when called there, else as a job.
    package func onLoop(_ work: @escaping () -> Void) {
        if isCurrent { work() } else { schedule(work) }
    }

    /// An observable whose every subscription is one run made by `makeRun`: started on the
    /// loop thread (unless the subscription was disposed before it got there) and stopped
    /// there on disposal. The monitors of devices and sensors are both built this way.
    package func observeRun<Element, Run: LoopConfinedRun>(
        _ makeRun: @escaping (AnyObserver<Element>) -> Run
    ) -> Observable<Element> {
        Observable<Element>.create { [self] observer in
            let run = makeRun(observer)
            let cancelled = BooleanDisposable()
            onLoop {
                if !cancelled.isDisposed { run.start() }
            }
            return Disposables.create {
                cancelled.dispose()
                self.onLoop { run.stop() }
            }
        }
    }
}
