import Testing
@testable import EvflowProtocol

/// What `JSONDecoder` hid in a request line (issue #25, finding 8): a repeated member was
/// accepted first-wins silently, and an over-large number was "not valid JSON".
@Suite struct RequestLineScanTests {
    func error(_ line: String) -> ProtocolError? {
        do {
            _ = try Request.parse(line)
            return nil
        } catch {
            return error
        }
    }

    @Test func aRepeatedMemberIsRefusedNamingIt() {
        let e = error(#"{"class":"PING","class":"STATS"}"#)
        #expect(e?.kind == .duplicateField("class"))
        #expect(e?.message == "field 'class' is given more than once")
        #expect(e?.field == "class")
        let w = error(#"{"class":"WATCH","id":7,"types":["EV_KEY"],"types":[]}"#)
        #expect(w?.kind == .duplicateField("types"))
        #expect(w?.requestClass == "WATCH")
        #expect(w?.tag == .integer(7))
        // Spelt differently, the same name.
        #expect(error(#"{"class":"PING","cl\u0061ss":"PING"}"#)?.kind == .duplicateField("class"))
    }

    @Test func equalNamesInDifferentObjectsAndEqualValuesAreNotDuplicates() {
        #expect(error(#"{"class":"WATCH","devices":["a","a"],"codes":["KEY_A","KEY_A"]}"#) == nil)
        #expect(error(#"{"class":"PING","id":"class \"class\""}"#) == nil)
    }

    @Test func aNumberBeyondADoubleIsOutOfRangeNamingItsField() {
        let e = error(#"{"class":"WATCH","max_rate":1e400}"#)
        #expect(e?.kind == .numberOutOfRange(field: "max_rate"))
        #expect(e?.message == "the number in field 'max_rate' is out of range")
        #expect(error(#"{"class":"WATCH","types":[1, -1e999]}"#)?.kind == .numberOutOfRange(field: "types"))
        #expect(error(#"{"class":"PING","id":1e400}"#)?.field == "id")
        // Large but finite numbers are numbers: the member's own rule judges them.
        #expect(error(#"{"class":"WATCH","max_rate":1e300}"#)?.kind == .invalidMaxRate)
        // Broken JSON is still broken JSON.
        #expect(error(#"{"class":"PING""#)?.kind == .notJSON)
    }
}
