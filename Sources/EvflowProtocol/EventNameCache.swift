import InputModel

/// Event type and code names pre-encoded as JSON strings, built once per `EventNaming`.
///
/// Stream messages write a type and a code name per event; looking them up through closures
/// and escaping them every time would dominate the cost of a `FRAME`. The cache holds the
/// quoted bytes, so writing a name is one append. Immutable, so one instance is shared by all
/// writers on all threads.
public final class EventNameCache: Sendable {
    /// The naming the cache was built from.
    public let naming: EventNaming
    /// Quoted type names by type number (`0...EV_MAX`), nil where the type has no name.
    private let typeNames: [[UInt8]?]
    /// Quoted code names per type, indexed by code, nil where the code has no name.
    private let codeNames: [[[UInt8]?]]

    /// The cache for `EventNaming.standard`.
    public static let standard = EventNameCache(.standard)

    /// Builds the cache for a naming.
    public init(_ naming: EventNaming) {
        self.naming = naming
        var types: [[UInt8]?] = []
        var codes: [[[UInt8]?]] = []
        for t in 0...EventType.max {
            types.append(naming.typeName(t).map(JSONWriter.encodedString))
            let max = naming.maxCode(t)
            // Only types with a name have code names worth caching.
            if types.last! != nil && max >= 0 {
                codes.append((0...max).map { naming.codeName(t, UInt16($0)).map(JSONWriter.encodedString) })
            } else {
                codes.append([])
            }
        }
        typeNames = types
        codeNames = codes
    }

    /// Writes a type as its quoted name, or as an integer when it has none.
    @inlinable
    public func writeType(_ type: UInt16, to w: inout JSONWriter) {
        if let name = typeNameBytes(type) { w.raw(name) } else { w.int(Int64(type)) }
    }

    /// Writes a code as its quoted name, or as an integer when it has none.
    @inlinable
    public func writeCode(type: UInt16, code: UInt16, to w: inout JSONWriter) {
        if let name = codeNameBytes(type: type, code: code) { w.raw(name) } else { w.int(Int64(code)) }
    }

    /// The quoted name of a type, if any.
    @usableFromInline
    func typeNameBytes(_ type: UInt16) -> [UInt8]? {
        Int(type) < typeNames.count ? typeNames[Int(type)] : nil
    }

    /// The quoted name of a code, if any.
    @usableFromInline
    func codeNameBytes(type: UInt16, code: UInt16) -> [UInt8]? {
        guard Int(type) < codeNames.count else { return nil }
        let names = codeNames[Int(type)]
        return Int(code) < names.count ? names[Int(code)] : nil
    }

    /// A type as an object key: its name, or its decimal number.
    public func typeKey(_ type: UInt16) -> String { naming.typeName(type) ?? String(type) }

    /// A code as an object key: its name, or its decimal number.
    public func codeKey(type: UInt16, code: UInt16) -> String { naming.codeName(type, code) ?? String(code) }
}
