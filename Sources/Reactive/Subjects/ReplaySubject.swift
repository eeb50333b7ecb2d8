/// Replays up to `bufferSize` most recent elements to each new subscriber, then delivers
/// live events; a stop event is replayed after the buffered elements.
public final class ReplaySubject<Element>: SubjectBase<Element>, ObservableType, ObserverType, @unchecked Sendable {
    private let bufferSize: Int
    // Ring buffer, touched only inside the gate.
    @exclusivity(unchecked) private var buffer: [Element] = []
    @exclusivity(unchecked) private var head = 0

    /// Creates a subject that replays the last `bufferSize` elements (`bufferSize` ≥ 1).
    public init(bufferSize: Int) {
        precondition(bufferSize >= 1, "ReplaySubject bufferSize must be at least 1")
        self.bufferSize = bufferSize
        super.init()
        buffer.reserveCapacity(min(bufferSize, 1024))
        core.onNextHook = { [weak self] in self?.append($0) }
        core.replayHook = { [weak self] observer in self?.replay(to: observer) }
    }

    /// Creates a subject that replays everything (use with care).
    public static func createUnbounded() -> ReplaySubject<Element> {
        ReplaySubject(bufferSize: .max)
    }

    private func append(_ element: Element) {
        if buffer.count < bufferSize {
            buffer.append(element)
        } else {
            buffer[head] = element
            head = (head + 1) % bufferSize
        }
    }

    private func replay(to observer: AnyObserver<Element>) {
        for i in 0..<buffer.count {
            observer.on(.next(buffer[(head + i) % buffer.count]))
        }
    }

    /// Sends an event; `next` elements are also buffered.
    @inlinable
    public func on(_ event: Event<Element>) {
        core.send(.event(event))
    }
}
