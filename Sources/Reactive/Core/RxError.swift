/// Errors the core's operators produce themselves.
public enum RxError: Error, Equatable, Hashable, Sendable, CustomStringConvertible {
    /// No element arrived within the allowed time (`timeout`).
    case timeout
    /// The sequence completed without the element an operator needed.
    case noElements
    /// An operator argument is outside its valid range (e.g. a negative count).
    case argumentOutOfRange

    /// `RxError.timeout`, ...
    public var description: String {
        switch self {
        case .timeout: return "RxError.timeout"
        case .noElements: return "RxError.noElements"
        case .argumentOutOfRange: return "RxError.argumentOutOfRange"
        }
    }
}
