import Reactive

/// Virtual time in test ticks (see `TestScheduler.tick`).
public typealias TestTime = Int

/// A value observed or scheduled at a virtual time.
public struct Recorded<Value> {
    /// When, in ticks.
    public let time: TestTime
    /// What.
    public let value: Value

    /// Creates a record.
    public init(time: TestTime, value: Value) {
        self.time = time
        self.value = value
    }
}

extension Recorded: Equatable where Value: Equatable {}

extension Recorded: CustomDebugStringConvertible {
    public var debugDescription: String { "\(value) @ \(time)" }
}

extension Recorded {
    /// `.next(210, element)`.
    public static func next<T>(_ time: TestTime, _ element: T) -> Recorded<Event<T>> where Value == Event<T> {
        Recorded(time: time, value: .next(element))
    }

    /// `.completed(300)`.
    public static func completed<T>(_ time: TestTime, _ type: T.Type = T.self) -> Recorded<Event<T>> where Value == Event<T> {
        Recorded(time: time, value: .completed)
    }

    /// `.error(300, error)`.
    public static func error<T>(_ time: TestTime, _ error: any Error, _ type: T.Type = T.self) -> Recorded<Event<T>>
    where Value == Event<T> {
        Recorded(time: time, value: .error(error))
    }
}

/// When a subscription started and ended, in ticks (`.max` while it is still active).
public struct Subscription: Equatable, Hashable, CustomDebugStringConvertible, Sendable {
    /// Subscribe time.
    public let subscribe: TestTime
    /// Dispose time, or `.max` while active.
    public let unsubscribe: TestTime

    /// A subscription still active.
    public init(_ subscribe: TestTime) {
        self.subscribe = subscribe
        self.unsubscribe = .max
    }

    /// A subscription that ended.
    public init(_ subscribe: TestTime, _ unsubscribe: TestTime) {
        self.subscribe = subscribe
        self.unsubscribe = unsubscribe
    }

    public var debugDescription: String {
        unsubscribe == .max ? "(\(subscribe), never)" : "(\(subscribe), \(unsubscribe))"
    }
}

/// A plain error for tests.
public struct TestError: Error, Equatable, CustomStringConvertible {
    /// Tells errors apart.
    public let id: Int
    /// Creates an error.
    public init(_ id: Int = 0) { self.id = id }
    public var description: String { "TestError(\(id))" }
}
