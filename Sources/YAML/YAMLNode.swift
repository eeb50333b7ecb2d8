/// A position in a YAML text: 1-based line and column (the column counts characters as
/// libyaml does, by Unicode scalar).
public struct YAMLMark: Hashable, Sendable, CustomStringConvertible {
    public var line: Int
    public var column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "line \(line), column \(column)" }
}

/// One node of a composed YAML document (see `YAMLComposer`).
///
/// Aliases do not appear: an alias is replaced by the node its anchor names, so an anchored
/// node used N times appears N times in the tree (sharing storage; walking it visits it N
/// times — bound such walks with `expandedCount(limit:)`).
///
/// Equality (and hashing) is YAML's node equality, the one that decides whether two mapping
/// keys are the same: the same kind, the same tag (`YAMLTag`) and equal contents; marks,
/// styles and anchors do not count. Mapping pairs compare in order.
public enum YAMLNode: Hashable, Sendable {
    case scalar(YAMLScalar)
    case mapping(YAMLMapping)
    case sequence(YAMLSequence)

    /// Where the node starts in the text.
    public var mark: YAMLMark {
        switch self {
        case .scalar(let s): s.mark
        case .mapping(let m): m.mark
        case .sequence(let s): s.mark
        }
    }

    /// The node's tag: the explicit one, else `YAMLTag.resolve` for a plain scalar, `str` for
    /// any other scalar, `map` and `seq` for collections.
    public var tag: String {
        switch self {
        case .scalar(let s): s.tag
        case .mapping(let m): m.tag
        case .sequence(let s): s.tag
        }
    }

    /// The scalar, or nil for a collection.
    public var scalar: YAMLScalar? {
        if case .scalar(let s) = self { return s }
        return nil
    }

    /// The mapping, or nil for any other node.
    public var mapping: YAMLMapping? {
        if case .mapping(let m) = self { return m }
        return nil
    }

    /// The sequence, or nil for any other node.
    public var sequence: YAMLSequence? {
        if case .sequence(let s) = self { return s }
        return nil
    }

    /// A scalar's text as written (whatever its tag: `1`, `true` and `~` are text too); nil
    /// for a collection.
    public var string: String? { scalar?.string }

    /// The nodes this node expands to — itself and every node below it, an aliased node
    /// counted at every place it is used — or nil as soon as the count passes `limit`. The
    /// walk stops there, so it costs at most `limit` steps whatever the aliases multiply to.
    public func expandedCount(limit: Int) -> Int? {
        var count = 0
        func visit(_ node: YAMLNode) -> Bool {
            count += 1
            if count > limit { return false }
            switch node {
            case .scalar:
                return true
            case .mapping(let mapping):
                for (key, value) in mapping where !visit(key) || !visit(value) { return false }
                return true
            case .sequence(let sequence):
                for item in sequence where !visit(item) { return false }
                return true
            }
        }
        return visit(self) ? count : nil
    }
}

/// A scalar node: its text exactly as libyaml delivers it (quotes, escapes and folding
/// already applied), its style and its tag.
public struct YAMLScalar: Hashable, Sendable {
    /// How the scalar was written.
    public enum Style: Sendable {
        case plain, singleQuoted, doubleQuoted, literal, folded
    }

    public var string: String
    public var style: Style
    /// The tag written on the node (`!!int 3`), expanded to its full form; nil if none.
    public var explicitTag: String?
    public var mark: YAMLMark
    /// The anchor the node was given (`&name`), if any.
    public var anchor: String?

    public init(_ string: String, style: Style = .plain, explicitTag: String? = nil,
                mark: YAMLMark = YAMLMark(line: 1, column: 1), anchor: String? = nil) {
        self.string = string
        self.style = style
        self.explicitTag = explicitTag
        self.mark = mark
        self.anchor = anchor
    }

    /// The explicit tag if there is one; else `YAMLTag.resolve(plain:)` of the text for a
    /// plain scalar and `YAMLTag.str` for a quoted or block one (YAML 1.1, as Yams decided it).
    public var tag: String {
        if let explicitTag { return explicitTag }
        return style == .plain ? YAMLTag.resolve(plain: string) : YAMLTag.str
    }

    public static func == (a: YAMLScalar, b: YAMLScalar) -> Bool {
        a.string == b.string && a.tag == b.tag
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(string)
        hasher.combine(tag)
    }
}

/// A mapping node: its key/value pairs in document order (duplicate keys are refused by the
/// composer, so a key appears once).
public struct YAMLMapping: RandomAccessCollection, Hashable, Sendable {
    public typealias Pair = (key: YAMLNode, value: YAMLNode)
    let storage: Storage<Pair>
    public var explicitTag: String?
    public var mark: YAMLMark
    public var anchor: String?

    public init(_ pairs: [Pair], explicitTag: String? = nil,
                mark: YAMLMark = YAMLMark(line: 1, column: 1), anchor: String? = nil) {
        storage = Storage(pairs)
        self.explicitTag = explicitTag
        self.mark = mark
        self.anchor = anchor
    }

    /// The pairs in document order.
    public var pairs: [Pair] { storage.items }
    public var tag: String { explicitTag ?? YAMLTag.map }
    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.items.count }
    public subscript(position: Int) -> Pair { storage.items[position] }

    /// The value of the last pair whose key equals the plain scalar `key` (its text and its
    /// resolved tag: `["1"]` finds the key `1` but not `"1"`); nil if there is none.
    public subscript(key: String) -> YAMLNode? {
        let wanted = YAMLNode.scalar(YAMLScalar(key))
        return storage.items.last(where: { $0.key == wanted })?.value
    }

    public static func == (a: YAMLMapping, b: YAMLMapping) -> Bool {
        guard a.tag == b.tag, a.count == b.count else { return false }
        if a.storage === b.storage { return true }   // one anchored node used twice
        return zip(a.storage.items, b.storage.items).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(tag)
        hasher.combine(count)
    }
}

/// A sequence node: its items in order.
public struct YAMLSequence: RandomAccessCollection, Hashable, Sendable {
    let storage: Storage<YAMLNode>
    public var explicitTag: String?
    public var mark: YAMLMark
    public var anchor: String?

    public init(_ items: [YAMLNode], explicitTag: String? = nil,
                mark: YAMLMark = YAMLMark(line: 1, column: 1), anchor: String? = nil) {
        storage = Storage(items)
        self.explicitTag = explicitTag
        self.mark = mark
        self.anchor = anchor
    }

    public var items: [YAMLNode] { storage.items }
    public var tag: String { explicitTag ?? YAMLTag.seq }
    public var startIndex: Int { 0 }
    public var endIndex: Int { storage.items.count }
    public subscript(position: Int) -> YAMLNode { storage.items[position] }

    public static func == (a: YAMLSequence, b: YAMLSequence) -> Bool {
        guard a.tag == b.tag, a.count == b.count else { return false }
        if a.storage === b.storage { return true }
        return a.storage.items == b.storage.items
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(tag)
        hasher.combine(count)
    }
}

/// A collection's items in one shared, immutable box: an aliased collection is the same box
/// at every place it is used, so comparing it with itself is one pointer comparison (an
/// alias-built key cannot make duplicate-key checking exponential).
final class Storage<Item: Sendable>: Sendable {
    let items: [Item]
    init(_ items: [Item]) { self.items = items }
}

/// The guard against YAML alias bombs, shared by the libinput record reader and the filter
/// configuration loader.
public enum YAMLLimits {
    /// The nodes a document may expand to: 4 per byte of text (at least 10,000). A document
    /// can only have more through aliases used over and over (a "billion laughs"), which would
    /// make walking it take exponential time.
    public static func maxNodes(textBytes: Int) -> Int { max(10_000, 4 * textBytes) }

    /// Whether `node` expands to more than `limit` nodes, counting an aliased node at every
    /// place it is used; stops counting at the limit.
    public static func expandsBeyond(_ node: YAMLNode, limit: Int) -> Bool {
        node.expandedCount(limit: limit) == nil
    }
}
