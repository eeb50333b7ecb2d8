import CYAML

/// Composes YAML text into `YAMLNode`s: libyaml (the system's libyaml 0.2) scans and parses
/// the text into events; this type only builds nodes from them.
///
/// - One document at most: a second document is an error (`expected a single document in
///   the stream`).
/// - Aliases are replaced by the node their anchor named when the alias was read (an anchor
///   defined again later names the new node from then on); an alias with no anchor before it,
///   including one inside the node it names, is an error.
/// - A mapping with two equal keys (`YAMLNode` equality: text and tag) is an error naming the
///   keys and the first one's line.
/// - Collections nested deeper than `maxDepth` are an error (no unbounded recursion on
///   hostile input). The expansion of aliases is not bounded here: callers check
///   `YAMLNode.expandedCount(limit:)` before walking a document.
public enum YAMLComposer {
    /// Deepest nesting of mappings and sequences accepted.
    public static let maxDepth = 256

    /// The document in `text`, or nil if the text holds none (empty, or only comments and
    /// blank lines). An explicit empty document (`---`) is the empty plain scalar.
    public static func compose(_ text: String) throws(YAMLError) -> YAMLNode? {
        var text = text
        let result: Result<YAMLNode?, YAMLError> = text.withUTF8 { bytes in
            let parser = EventSource(bytes)
            defer { parser.close() }
            do throws(YAMLError) {
                var composer = Composer(source: parser)
                return .success(try composer.singleDocument())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}

/// One event, copied out of libyaml's struct (which is freed at once).
struct Event {
    enum Kind {
        case streamStart, streamEnd, documentStart, documentEnd
        case alias(anchor: String)
        case scalar(YAMLScalar)
        case sequenceStart(tag: String?, anchor: String?)
        case sequenceEnd
        case mappingStart(tag: String?, anchor: String?)
        case mappingEnd
    }
    var kind: Kind
    var mark: YAMLMark
}

/// libyaml's parser over a byte buffer that outlives it.
final class EventSource {
    private let parser = UnsafeMutablePointer<yaml_parser_t>.allocate(capacity: 1)
    private let input: UnsafeBufferPointer<UInt8>

    init(_ input: UnsafeBufferPointer<UInt8>) {
        self.input = input
        yaml_parser_initialize(parser)
        yaml_parser_set_encoding(parser, YAML_UTF8_ENCODING)
        yaml_parser_set_input_string(parser, input.baseAddress ?? UnsafePointer(bitPattern: 1), input.count)
    }

    func close() {
        yaml_parser_delete(parser)
        parser.deallocate()
    }

    func next() throws(YAMLError) -> Event {
        var raw = yaml_event_t()
        guard yaml_parser_parse(parser, &raw) == 1 else { throw currentError() }
        defer { yaml_event_delete(&raw) }
        let mark = YAMLMark(line: Int(raw.start_mark.line) + 1, column: Int(raw.start_mark.column) + 1)
        let kind: Event.Kind
        switch raw.type {
        case YAML_STREAM_START_EVENT: kind = .streamStart
        case YAML_STREAM_END_EVENT: kind = .streamEnd
        case YAML_DOCUMENT_START_EVENT: kind = .documentStart
        case YAML_DOCUMENT_END_EVENT: kind = .documentEnd
        case YAML_ALIAS_EVENT: kind = .alias(anchor: Self.string(raw.data.alias.anchor) ?? "")
        case YAML_SCALAR_EVENT:
            let s = raw.data.scalar
            let value = String(decoding: UnsafeBufferPointer(start: s.value, count: Int(s.length)), as: UTF8.self)
            let style: YAMLScalar.Style = switch s.style {
            case YAML_SINGLE_QUOTED_SCALAR_STYLE: .singleQuoted
            case YAML_DOUBLE_QUOTED_SCALAR_STYLE: .doubleQuoted
            case YAML_LITERAL_SCALAR_STYLE: .literal
            case YAML_FOLDED_SCALAR_STYLE: .folded
            default: .plain
            }
            // libyaml reports `! text` (the non-specific tag) as plain with tag "!".
            kind = .scalar(YAMLScalar(value, style: style, explicitTag: Self.string(s.tag), mark: mark,
                                      anchor: Self.string(s.anchor)))
        case YAML_SEQUENCE_START_EVENT:
            kind = .sequenceStart(tag: Self.string(raw.data.sequence_start.tag),
                                  anchor: Self.string(raw.data.sequence_start.anchor))
        case YAML_SEQUENCE_END_EVENT: kind = .sequenceEnd
        case YAML_MAPPING_START_EVENT:
            kind = .mappingStart(tag: Self.string(raw.data.mapping_start.tag),
                                 anchor: Self.string(raw.data.mapping_start.anchor))
        case YAML_MAPPING_END_EVENT: kind = .mappingEnd
        default:
            throw YAMLError(stage: .parser, problem: "no event (libyaml returned none)", mark: mark)
        }
        return Event(kind: kind, mark: mark)
    }

    private static func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    private func currentError() -> YAMLError {
        let p = parser.pointee
        let problem = p.problem.map { String(cString: $0) } ?? "unknown error"
        func mark(_ m: yaml_mark_t) -> YAMLMark { YAMLMark(line: Int(m.line) + 1, column: Int(m.column) + 1) }
        let context = p.context.map { String(cString: $0) }
        switch p.error {
        case YAML_READER_ERROR:
            // libyaml gives the offending byte's offset only: count lines and characters to it.
            let offset = min(Int(p.problem_offset), input.count)
            var line = 1, column = 1
            for byte in input[..<offset] {
                if byte == UInt8(ascii: "\n") { line += 1; column = 1 } else if byte & 0xC0 != 0x80 { column += 1 }
            }
            return YAMLError(stage: .reader, problem: problem, mark: YAMLMark(line: line, column: column))
        case YAML_SCANNER_ERROR:
            return YAMLError(stage: .scanner, problem: problem, mark: mark(p.problem_mark), context: context,
                             contextMark: context == nil ? nil : mark(p.context_mark))
        case YAML_MEMORY_ERROR:
            return YAMLError(stage: .reader, problem: "out of memory", mark: mark(p.mark))
        default:
            return YAMLError(stage: .parser, problem: problem, mark: mark(p.problem_mark), context: context,
                             contextMark: context == nil ? nil : mark(p.context_mark))
        }
    }
}

/// Builds nodes from events, recursively (depth bounded by `YAMLComposer.maxDepth`).
struct Composer {
    let source: EventSource
    var anchors: [String: YAMLNode] = [:]
    var depth = 0

    init(source: EventSource) { self.source = source }

    mutating func singleDocument() throws(YAMLError) -> YAMLNode? {
        _ = try source.next()   // stream start
        let first = try source.next()
        if case .streamEnd = first.kind { return nil }
        let root = try node(from: try source.next())
        _ = try source.next()   // document end
        let after = try source.next()
        if case .streamEnd = after.kind { return root }
        throw YAMLError(stage: .composer, problem: "but found another document", mark: after.mark,
                        context: "expected a single document in the stream", contextMark: first.mark)
    }

    mutating func node(from event: Event) throws(YAMLError) -> YAMLNode {
        switch event.kind {
        case .scalar(let scalar):
            let node = YAMLNode.scalar(scalar)
            if let anchor = scalar.anchor { anchors[anchor] = node }
            return node
        case .alias(let name):
            guard let node = anchors[name] else {
                throw YAMLError(stage: .composer, problem: "found undefined alias '\(name)'", mark: event.mark)
            }
            return node
        case .sequenceStart(let tag, let anchor):
            try enter(event)
            defer { depth -= 1 }
            var items: [YAMLNode] = []
            while true {
                let next = try source.next()
                if case .sequenceEnd = next.kind { break }
                items.append(try node(from: next))
            }
            let node = YAMLNode.sequence(YAMLSequence(items, explicitTag: tag, mark: event.mark, anchor: anchor))
            if let anchor { anchors[anchor] = node }
            return node
        case .mappingStart(let tag, let anchor):
            try enter(event)
            defer { depth -= 1 }
            var pairs: [YAMLMapping.Pair] = []
            while true {
                let next = try source.next()
                if case .mappingEnd = next.kind { break }
                let key = try node(from: next)
                let value = try node(from: try source.next())
                pairs.append((key, value))
            }
            try Self.checkDuplicates(pairs)
            let node = YAMLNode.mapping(YAMLMapping(pairs, explicitTag: tag, mark: event.mark, anchor: anchor))
            if let anchor { anchors[anchor] = node }
            return node
        default:
            throw YAMLError(stage: .composer, problem: "unexpected event where a node should start", mark: event.mark)
        }
    }

    private mutating func enter(_ event: Event) throws(YAMLError) {
        depth += 1
        if depth > YAMLComposer.maxDepth {
            throw YAMLError(stage: .composer,
                            problem: "mappings and sequences nested deeper than \(YAMLComposer.maxDepth) levels",
                            mark: event.mark)
        }
    }

    /// Refuses equal keys: names every duplicated key (sorted by text) and the first
    /// occurrence of the first of them.
    static func checkDuplicates(_ pairs: [YAMLMapping.Pair]) throws(YAMLError) {
        guard pairs.count > 1 else { return }
        var first: [YAMLNode: Int] = [:]
        var duplicated: Set<Int> = []
        for (index, pair) in pairs.enumerated() {
            if let earlier = first[pair.key] { duplicated.insert(earlier) } else { first[pair.key] = index }
        }
        guard !duplicated.isEmpty else { return }
        let keys = duplicated.map { pairs[$0].key }
            .sorted { ($0.string ?? "", $0.mark.line, $0.mark.column) < ($1.string ?? "", $1.mark.line, $1.mark.column) }
        let names = keys.map { $0.string ?? "<\($0.mapping != nil ? "mapping" : "sequence")>" }
        throw YAMLError(stage: .composer,
                        problem: "duplicate keys " + names.map { "'\($0)'" }.joined(separator: ", "),
                        mark: keys[0].mark, duplicateKeys: names)
    }
}
