import Synchronization

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
        let terminal = TerminalObserver<Element>(
            onNext: onNext, onError: onError, onCompleted: onCompleted, onDisposed: onDisposed)
        let upstream = subscribe(AnyObserver<Element> { terminal.on($0) })
        terminal.setUpstream(upstream)
        return terminal
    }
}

/// The observer at the end of `subscribe(onNext:...)`: enforces the grammar, stops on
/// disposal, and owns the upstream subscription.
///
/// Its `DisposalState` word holds `stopped` (a stop event was delivered), `disposed` and
/// `assigned` (the upstream disposable is set). The per-event cost is one relaxed load.
@usableFromInline
final class TerminalObserver<Element>: Cancelable, @unchecked Sendable {
    /// Counts this object in `LiveResources` until it is destroyed.
    private let live = LiveResources.Token()
    @usableFromInline let disposal = DisposalState()
    @usableFromInline let onNext: ((Element) -> Void)?
    @usableFromInline let onError: ((any Error) -> Void)?
    @usableFromInline let onCompleted: (() -> Void)?
    // Cleared by the single thread that disposes.
    @usableFromInline @exclusivity(unchecked) var onDisposed: (() -> Void)?
    @usableFromInline @exclusivity(unchecked) var upstream: Disposable?

    @inlinable
    init(onNext: ((Element) -> Void)?, onError: ((any Error) -> Void)?,
         onCompleted: (() -> Void)?, onDisposed: (() -> Void)?) {
        self.onNext = onNext
        self.onError = onError
        self.onCompleted = onCompleted
        self.onDisposed = onDisposed
    }

    @inlinable
    var isDisposed: Bool { disposal.isDisposed }

    @inlinable
    func on(_ event: Event<Element>) {
        if disposal.isStoppedOrDisposed { return }
        switch event {
        case .next(let element):
            onNext?(element)
        case .error(let error):
            guard disposal.stop() else { return }
            if let onError {
                onError(error)
            } else {
                reportUnhandledError(error)
            }
            dispose()
        case .completed:
            guard disposal.stop() else { return }
            onCompleted?()
            dispose()
        }
    }

    /// Sets the upstream subscription; disposes it at once if disposed (or stopped and
    /// disposed) while subscribing.
    @inlinable
    func setUpstream(_ disposable: Disposable) {
        disposal.assign(disposable) { upstream = $0 }
    }

    @inlinable
    func dispose() {
        guard disposal.dispose(take: { upstream.take() }) else { return }
        let handler = onDisposed
        onDisposed = nil
        handler?()
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
