#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A pass over a request line's JSON for what the decoder hides: a member given twice in one
/// object (`JSONDecoder` keeps one of them silently) and a number too large for a `Double`
/// (which it reports only as invalid JSON). It follows the structure without validating it:
/// the decoder does that.
struct JSONLineScan {
    /// What the scan found.
    enum Finding: Equatable {
        /// A member name repeated in one object.
        case duplicate(String)
        /// A number beyond a `Double`'s range, in the member `field` (nil at the top level).
        case numberOutOfRange(field: String?)
    }

    private enum Frame {
        case object(keys: Set<String>, key: String?, expectingKey: Bool)
        case array(field: String?)
    }

    /// The first finding in `line`, or nil.
    static func scan(_ line: ArraySlice<UInt8>) -> Finding? {
        var stack: [Frame] = []
        var i = line.startIndex
        /// The member a value at this point belongs to.
        func field() -> String? {
            switch stack.last {
            case .object(_, let key, _)?: return key
            case .array(let field)?: return field
            case nil: return nil
            }
        }
        while i < line.endIndex {
            let b = line[i]
            switch b {
            case UInt8(ascii: "{"):
                stack.append(.object(keys: [], key: nil, expectingKey: true))
                i += 1
            case UInt8(ascii: "["):
                stack.append(.array(field: field()))
                i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                _ = stack.popLast()
                i += 1
            case UInt8(ascii: ","):
                if case .object(let keys, let key, _)? = stack.last {
                    stack[stack.count - 1] = .object(keys: keys, key: key, expectingKey: true)
                }
                i += 1
            case UInt8(ascii: "\""):
                let start = i
                i += 1
                var escaped = false
                while i < line.endIndex && line[i] != UInt8(ascii: "\"") {
                    if line[i] == UInt8(ascii: "\\") { escaped = true; i += 1 }
                    i += 1
                }
                guard i < line.endIndex else { return nil }   // unterminated: the decoder says so
                i += 1
                if case .object(var keys, _, true)? = stack.last {
                    let name = escaped ? decodeString(line[start..<i]) : String(decoding: line[(start + 1)..<(i - 1)], as: UTF8.self)
                    guard let name else { return nil }
                    if !keys.insert(name).inserted { return .duplicate(name) }
                    stack[stack.count - 1] = .object(keys: keys, key: name, expectingKey: false)
                }
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                let start = i
                while i < line.endIndex, isNumberByte(line[i]) { i += 1 }
                let text = String(decoding: line[start..<i], as: UTF8.self)
                if let value = Double(text), !value.isFinite { return .numberOutOfRange(field: field()) }
            default:
                i += 1
            }
        }
        return nil
    }

    private static func isNumberByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
             UInt8(ascii: "e"), UInt8(ascii: "E"):
            return true
        default:
            return false
        }
    }

    /// A quoted JSON string with escapes, decoded (rare in member names).
    private static func decodeString(_ token: ArraySlice<UInt8>) -> String? {
        try? JSONDecoder().decode(String.self, from: Data(token))
    }
}
