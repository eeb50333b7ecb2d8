import Synchronization

/// A resource that can be released: a subscription, a scheduled action, a timer.
///
/// `dispose()` is idempotent and may be called from any thread, including while the
/// subscription is still being set up.
public protocol Disposable: Sendable {
    /// Releases the resource. Calling it again does nothing.
    func dispose()
}

/// A disposable that can tell whether it has been disposed.
public protocol Cancelable: Disposable {
    /// Whether `dispose()` has been called.
    var isDisposed: Bool { get }
}

/// Factory functions for disposables.
public enum Disposables {
    /// A disposable that does nothing.
    @inlinable
    public static func create() -> Disposable { NopDisposable.instance }

    /// A disposable that runs `action` once, on the first `dispose()`.
    @inlinable
    public static func create(with action: @escaping () -> Void) -> Cancelable {
        AnonymousDisposable(action)
    }

    /// A disposable that disposes both.
    @inlinable
    public static func create(_ first: Disposable, _ second: Disposable) -> Cancelable {
        BinaryDisposable(first, second)
    }

    /// A disposable that disposes all of them, in order.
    public static func create(_ first: Disposable, _ second: Disposable, _ rest: Disposable...) -> Cancelable {
        CompositeDisposable(disposables: [first, second] + rest)
    }

    /// A disposable that disposes all of them, in order.
    public static func create(_ disposables: [Disposable]) -> Cancelable {
        CompositeDisposable(disposables: disposables)
    }
}

/// The disposable that does nothing.
@usableFromInline
struct NopDisposable: Disposable {
    @usableFromInline static let instance: Disposable = NopDisposable()
    @inlinable init() {}
    @inlinable func dispose() {}
}

/// Runs a closure once on the first `dispose()`.
@usableFromInline
final class AnonymousDisposable: Cancelable, @unchecked Sendable {
    /// Counts this object in `LiveResources` until it is destroyed.
    private let live = LiveResources.Token()
    @usableFromInline let disposal = DisposalState()
    // Written once in init, read and cleared only by the thread that wins `disposal`.
    @usableFromInline @exclusivity(unchecked) var action: (() -> Void)?

    @inlinable
    init(_ action: @escaping () -> Void) {
        self.action = action
    }

    @inlinable
    var isDisposed: Bool { disposal.isDisposed }

    @inlinable
    func dispose() {
        guard disposal.dispose() else { return }
        let action = self.action
        self.action = nil
        action?()
    }
}

/// Disposes two disposables once.
@usableFromInline
final class BinaryDisposable: Cancelable, @unchecked Sendable {
    /// Counts this object in `LiveResources` until it is destroyed.
    private let live = LiveResources.Token()
    @usableFromInline let disposal = DisposalState()
    // Written once in init, read and cleared only by the thread that wins `disposal`.
    @usableFromInline @exclusivity(unchecked) var first: Disposable?
    @usableFromInline @exclusivity(unchecked) var second: Disposable?

    @inlinable
    init(_ first: Disposable, _ second: Disposable) {
        self.first = first
        self.second = second
    }

    @inlinable
    var isDisposed: Bool { disposal.isDisposed }

    @inlinable
    func dispose() {
        guard disposal.dispose() else { return }
        let (a, b) = (first, second)
        first = nil
        second = nil
        a?.dispose()
        b?.dispose()
    }
}

/// A disposable that only records that it was disposed.
public final class BooleanDisposable: Cancelable, @unchecked Sendable {
    private let disposed: Atomic<Bool>

    /// Creates a disposable, optionally already disposed.
    public init(isDisposed: Bool = false) {
        disposed = Atomic(isDisposed)
    }

    /// Whether `dispose()` has been called.
    public var isDisposed: Bool { disposed.load(ordering: .acquiring) }

    /// Marks it disposed.
    public func dispose() { disposed.store(true, ordering: .releasing) }
}

extension Disposable {
    /// Adds this disposable to `bag`, which disposes it when the bag is deallocated.
    public func disposed(by bag: DisposeBag) {
        bag.insert(self)
    }
}
