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
/// One atomic state word: `stopped` (a stop event was delivered), `disposed`, `assigned`
/// (the upstream disposable is set). The per-event cost is one relaxed load.
@usableFromInline
final class TerminalObserver<Element>: Cancelable, @unchecked Sendable {
    @usableFromInline static var stoppedBit: Int { 1 }
    @usableFromInline static var disposedBit: Int { 2 }
    @usableFromInline static var assignedBit: Int { 4 }

    @usableFromInline let state = Atomic<Int>(0)
    @usableFromInline let onNext: ((Element) -> Void)?
    @usableFromInline let onError: ((any Error) -> Void)?
    @usableFromInline let onCompleted: (() -> Void)?
    // Cleared by the single thread that disposes.
    @usableFromInline var onDisposed: (() -> Void)?
    @usableFromInline var upstream: Disposable?

    @inlinable
    init(onNext: ((Element) -> Void)?, onError: ((any Error) -> Void)?,
         onCompleted: (() -> Void)?, onDisposed: (() -> Void)?) {
        self.onNext = onNext
        self.onError = onError
        self.onCompleted = onCompleted
        self.onDisposed = onDisposed
        LiveResources.increment()
    }

    deinit { LiveResources.decrement() }

    @inlinable
    var isDisposed: Bool { state.load(ordering: .acquiring) & Self.disposedBit != 0 }

    @inlinable
    func on(_ event: Event<Element>) {
        if state.load(ordering: .relaxed) & (Self.stoppedBit | Self.disposedBit) != 0 { return }
        switch event {
        case .next(let element):
            onNext?(element)
        case .error(let error):
            let old = state.bitwiseOr(Self.stoppedBit, ordering: .acquiringAndReleasing).oldValue
            guard old & (Self.stoppedBit | Self.disposedBit) == 0 else { return }
            if let onError {
                onError(error)
            } else {
                reportUnhandledError(error)
            }
            dispose()
        case .completed:
            let old = state.bitwiseOr(Self.stoppedBit, ordering: .acquiringAndReleasing).oldValue
            guard old & (Self.stoppedBit | Self.disposedBit) == 0 else { return }
            onCompleted?()
            dispose()
        }
    }

    @inlinable
    func setUpstream(_ disposable: Disposable) {
        upstream = disposable
        let old = state.bitwiseOr(Self.assignedBit, ordering: .acquiringAndReleasing).oldValue
        if old & Self.disposedBit != 0 {
            // Disposed (or stopped and disposed) while subscribing: dispose upstream now.
            upstream = nil
            disposable.dispose()
        }
    }

    @inlinable
    func dispose() {
        let old = state.bitwiseOr(Self.disposedBit, ordering: .acquiringAndReleasing).oldValue
        if old & Self.disposedBit != 0 { return }
        if old & Self.assignedBit != 0 {
            let up = upstream
            upstream = nil
            up?.dispose()
        }
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
