import Reactive

/// Marble strings: one character per frame of `frame` ticks, starting at tick `start`.
///
/// - `-` one frame with nothing; a space is ignored (for alignment).
/// - a letter or digit: `next` with `values[char]` (or the character itself when no value
///   table is given and `Element` is `String`).
/// - `|` completed; `#` error (`error` argument).
/// - `(ab|)` a group: everything inside happens at the frame of `(`, and the group takes
///   one frame.
///
/// `marbles(_:)` renders recorded events the same way, which is how the diagrams in
/// docs/operators are produced from passing tests.
public enum Marbles {
    /// Errors in a marble string.
    public struct ParseError: Error, CustomStringConvertible {
        /// What went wrong.
        public let description: String
    }

    /// Parses `diagram` into recorded events.
    public static func parse<Element>(_ diagram: String, values: [Character: Element], error: any Error = TestError(),
                                      frame: TestTime = 10, start: TestTime = 0) throws -> [Recorded<Event<Element>>] {
        var result: [Recorded<Event<Element>>] = []
        var time = start
        var groupTime: TestTime? = nil
        for ch in diagram {
            let at = groupTime ?? time
            switch ch {
            case " ": continue
            case "-": break
            case "(":
                guard groupTime == nil else { throw ParseError(description: "nested group in \(diagram)") }
                groupTime = time
                continue
            case ")":
                guard groupTime != nil else { throw ParseError(description: "unbalanced ) in \(diagram)") }
                groupTime = nil
            case "|": result.append(Recorded(time: at, value: .completed))
            case "#": result.append(Recorded(time: at, value: .error(error)))
            default:
                guard let value = values[ch] else {
                    throw ParseError(description: "no value for '\(ch)' in \(diagram)")
                }
                result.append(Recorded(time: at, value: .next(value)))
            }
            if groupTime == nil { time += frame }
        }
        if groupTime != nil { throw ParseError(description: "unclosed group in \(diagram)") }
        return result
    }

    /// Parses a diagram whose letters stand for themselves (`Element == String`).
    public static func parse(_ diagram: String, error: any Error = TestError(), frame: TestTime = 10,
                             start: TestTime = 0) throws -> [Recorded<Event<String>>] {
        var values: [Character: String] = [:]
        for ch in diagram where ch.isLetter || ch.isNumber { values[ch] = String(ch) }
        return try parse(diagram, values: values, error: error, frame: frame, start: start)
    }

    /// Renders recorded events as a marble string, up to and including the last event.
    ///
    /// `symbol` names each element with one character. Events that do not fall on a frame
    /// boundary are placed in the frame that contains them; several events in one frame are
    /// grouped in parentheses.
    public static func render<Element>(_ events: [Recorded<Event<Element>>], frame: TestTime = 10, start: TestTime = 0,
                                       symbol: (Element) -> String) -> String {
        var byFrame: [Int: [String]] = [:]
        var lastFrame = -1
        for record in events {
            let f = (record.time - start) / frame
            let s: String
            switch record.value {
            case .next(let e): s = symbol(e)
            case .completed: s = "|"
            case .error: s = "#"
            }
            byFrame[f, default: []].append(s)
            lastFrame = max(lastFrame, f)
        }
        var out = ""
        var f = 0
        while f <= lastFrame {
            if let items = byFrame[f] {
                out += items.count == 1 ? items[0] : "(" + items.joined() + ")"
            } else {
                out += "-"
            }
            f += 1
        }
        return out
    }

    /// Renders events whose elements describe themselves.
    public static func render<Element: CustomStringConvertible>(_ events: [Recorded<Event<Element>>], frame: TestTime = 10,
                                                                 start: TestTime = 0) -> String {
        render(events, frame: frame, start: start) { $0.description }
    }
}
