/// One notification of an observable sequence.
///
/// Grammar per subscription: `next* (error | completed)?` — after `error` or `completed`
/// nothing else is delivered. Delivery to one observer is serial.
@frozen
public enum Event<Element> {
    /// The next element.
    case next(Element)
    /// The sequence ended with an error.
    case error(any Error)
    /// The sequence ended successfully.
    case completed

    /// The element of a `next` event, else nil.
    @inlinable
    public var element: Element? {
        if case .next(let e) = self { return e }
        return nil
    }

    /// The error of an `error` event, else nil.
    @inlinable
    public var error: (any Error)? {
        if case .error(let e) = self { return e }
        return nil
    }

    /// Whether this event ends the sequence (`error` or `completed`).
    @inlinable
    public var isStopEvent: Bool {
        if case .next = self { return false }
        return true
    }

    /// The same event with the element transformed; stop events pass through.
    @inlinable
    public func map<Result>(_ transform: (Element) throws -> Result) -> Event<Result> {
        switch self {
        case .next(let e):
            do { return .next(try transform(e)) } catch { return .error(error) }
        case .error(let e): return .error(e)
        case .completed: return .completed
        }
    }
}

extension Event: @unchecked Sendable where Element: Sendable {}

extension Event: CustomDebugStringConvertible {
    /// `next(1)`, `error(...)`, `completed`.
    public var debugDescription: String {
        switch self {
        case .next(let e): return "next(\(e))"
        case .error(let e): return "error(\(e))"
        case .completed: return "completed"
        }
    }
}

extension Event: Equatable where Element: Equatable {
    /// Errors compare equal when they have the same type and description (errors are not
    /// `Equatable` in general; this is what tests need).
    public static func == (lhs: Event, rhs: Event) -> Bool {
        switch (lhs, rhs) {
        case (.next(let a), .next(let b)): return a == b
        case (.completed, .completed): return true
        case (.error(let a), .error(let b)):
            return type(of: a) == type(of: b) && String(describing: a) == String(describing: b)
        default: return false
        }
    }
}
