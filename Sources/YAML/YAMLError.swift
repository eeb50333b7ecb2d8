/// Why a YAML text could not be composed, and where.
public struct YAMLError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Which stage refused the text.
    public enum Stage: String, Sendable {
        /// libyaml's reader: bytes that are not UTF-8, or a control character YAML forbids.
        case reader
        /// libyaml's scanner: a malformed token (a tab used as indentation, an unclosed quote, …).
        case scanner
        /// libyaml's parser: tokens in an order YAML does not allow (an unclosed `[`, …).
        case parser
        /// The composer: an alias with no anchor before it, duplicate keys in a mapping, a
        /// second document, or nesting deeper than `YAMLComposer.maxDepth`.
        case composer
    }

    public var stage: Stage
    /// What is wrong, in libyaml's words for the first three stages (`did not find expected
    /// ',' or ']'`).
    public var problem: String
    /// Where the problem is (for a reader error: the offending byte's line and column).
    public var mark: YAMLMark
    /// What was being read when the problem was found (`while parsing a flow sequence`) and
    /// where that began; nil if libyaml gives none.
    public var context: String?
    public var contextMark: YAMLMark?
    /// For duplicate keys: each duplicated key's text, sorted (the first one's first
    /// occurrence is `mark`); empty for every other problem.
    public var duplicateKeys: [String]

    public init(stage: Stage, problem: String, mark: YAMLMark, context: String? = nil,
                contextMark: YAMLMark? = nil, duplicateKeys: [String] = []) {
        self.stage = stage
        self.problem = problem
        self.mark = mark
        self.context = context
        self.contextMark = contextMark
        self.duplicateKeys = duplicateKeys
    }

    /// The problem and its context, without the problem's own position:
    /// `did not find expected ',' or ']' (while parsing a flow sequence at line 7)`.
    public var message: String {
        guard let context else { return problem }
        return contextMark.map { "\(problem) (\(context) at line \($0.line))" } ?? "\(problem) (\(context))"
    }

    /// `line 8, column 1: did not find expected ',' or ']' (while parsing a flow sequence at line 7)`
    public var description: String { "\(mark): \(message)" }
}
