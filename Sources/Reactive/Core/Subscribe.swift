extension ObservableType {
    /// Subscribes closures to the sequence.
    ///
    /// After `error` or `completed` the subscription disposes itself (and the whole chain
    /// above it); `onDisposed` runs exactly once, when the subscription ends for any reason.
    /// After `dispose()` returns, no event that *reaches* the subscription afterwards is
    /// passed to the closures (each event checks the disposed flag first), and nothing
    /// reaches it from a sequence that is serial with the disposing thread (disposal from
    /// inside a closure, or on the scheduler that delivers). An event that another thread had
    /// already passed that check with may still run its closure, even after `dispose()` has
    /// returned: disposal does not wait for deliveries in flight on other threads.
    @inlinable
    public func subscribe(
        onNext: ((Element) -> Void)? = nil,
        onError: ((any Error) -> Void)? = nil,
        onCompleted: (() -> Void)? = nil,
        onDisposed: (() -> Void)? = nil
    ) -> Disposable {
        let terminal = GuardedObserver(
            SubscribeClosures<Element>(onNext: onNext, onError: onError, onCompleted: onCompleted),
            onDisposed: onDisposed)
        let upstream = subscribe(AnyObserver<Element> { terminal.on($0) })
        terminal.setUpstream(upstream)
        return terminal
    }
}

/// The end of `subscribe(onNext:...)`: its closures, behind a `GuardedObserver`.
@usableFromInline
struct SubscribeClosures<Element>: GuardedTarget {
    @usableFromInline let onNext: ((Element) -> Void)?
    @usableFromInline let onError: ((any Error) -> Void)?
    @usableFromInline let onCompleted: (() -> Void)?

    @inlinable
    init(onNext: ((Element) -> Void)?, onError: ((any Error) -> Void)?, onCompleted: (() -> Void)?) {
        self.onNext = onNext
        self.onError = onError
        self.onCompleted = onCompleted
    }

    @inlinable
    func onNext(_ element: Element) {
        onNext?(element)
    }

    @inlinable
    func onStop(_ event: Event<Element>) {
        switch event {
        case .next: break
        case .error(let error):
            if let onError {
                onError(error)
            } else {
                reportUnhandledError(error)
            }
        case .completed:
            onCompleted?()
        }
    }
}

/// Where errors nobody subscribed for go (like RxSwift's unhandled-error hook).
public enum UnhandledErrors {
    /// Called with every error that reaches a `subscribe` without `onError`. Defaults to
    /// printing to standard error; set it once at start-up.
    nonisolated(unsafe) public static var handler: @Sendable (any Error) -> Void = { error in
        FileHandleStandardError.write("evflow Reactive: unhandled error: \(error)\n")
    }
}

@usableFromInline
func reportUnhandledError(_ error: any Error) {
    UnhandledErrors.handler(error)
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@usableFromInline
enum FileHandleStandardError {
    static func write(_ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var offset = 0
            while offset < buffer.count {
                let n = Glibc.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if n <= 0 { return }
                offset += n
            }
        }
    }
}
