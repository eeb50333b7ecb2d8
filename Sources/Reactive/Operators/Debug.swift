
/// Where `debug` writes its lines.
public enum DebugOutput {
    private static let storage = PosixLocked<@Sendable (String) -> Void>({ line in
        FileHandleStandardError.write(line + "\n")
    })

    /// Receives each line `debug` produces (without a trailing newline). Defaults to standard
    /// error; replace it to capture the output (tests, a log).
    public static var sink: @Sendable (String) -> Void {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }

    /// Writes one line through the current sink.
    @usableFromInline
    static func write(_ line: String) {
        let sink = self.sink   // not called under the lock: the sink may be slow or re-enter
        sink(line)
    }

    /// `seconds.milliseconds` of a nanosecond clock reading, e.g. `12.345`.
    @usableFromInline
    static func timestamp(_ nanoseconds: Int64) -> String {
        let ms = nanoseconds / 1_000_000
        let fraction = String(ms % 1000)
        return "\(ms / 1000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
    }

    /// The event's description, shortened to its first and last 20 characters when
    /// `trim` is set and it is longer than 40.
    @usableFromInline
    static func describe<Element>(_ event: Event<Element>, trim: Bool) -> String {
        let text = event.debugDescription
        guard trim, text.count > 40 else { return text }
        return "\(text.prefix(20))...\(text.suffix(20))"
    }
}

extension ObservableType {
    /// Logs the subscription, every event and the disposal through `DebugOutput.sink`.
    ///
    /// Lines look like `12.345 identifier -> Event next(1)`; the other kinds are
    /// `subscribed`, `Event completed`, `Event error(...)` and `isDisposed`. The time stamp
    /// is `scheduler`'s clock in seconds (the monotonic clock when `scheduler` is nil).
    ///
    /// - Element, completion, error: logged, then passed on unchanged.
    /// - `trimOutput`: event descriptions longer than 40 characters are shortened to their
    ///   first and last 20 characters.
    /// - Disposal: logs `isDisposed` after disposing the source, once.
    @inlinable
    public func debug(_ identifier: String? = nil, trimOutput: Bool = false, scheduler: SchedulerType? = nil,
                      file: String = #fileID, line: UInt = #line, function: String = #function) -> Observable<Element> {
        let source = self
        let name = identifier ?? "\(file):\(line) (\(function))"
        return Observable { observer in
            func log(_ text: String) {
                let now = scheduler?.now ?? monotonicNow()
                DebugOutput.write("\(DebugOutput.timestamp(now)) \(name) -> \(text)")
            }
            log("subscribed")
            let subscription = source.subscribe(AnyObserver<Element> { event in
                log("Event " + DebugOutput.describe(event, trim: trimOutput))
                observer.on(event)
            })
            return Disposables.create {
                subscription.dispose()
                log("isDisposed")
            }
        }
    }
}
