import Testing
import YAML

@Suite("YAMLComposer: libyaml's events composed into nodes")
struct YAMLComposerTests {
    func compose(_ text: String) throws(YAMLError) -> YAMLNode? { try YAMLComposer.compose(text) }

    func error(_ text: String) -> YAMLError? {
        do { _ = try compose(text); return nil } catch { return error }
    }

    @Test("no document: empty text, blank lines and comments; an explicit empty document is the empty scalar")
    func emptyDocuments() throws {
        #expect(try compose("") == nil)
        #expect(try compose("\n\n# only a comment\n") == nil)
        let empty = try #require(try compose("---\n"))
        #expect(empty.string == "" && empty.tag == YAMLTag.null)
    }

    @Test("mappings keep their pairs in order, with each node's line and column")
    func mappingOrderAndMarks() throws {
        let root = try #require(try compose("b: 1\na:\n  - x\n  - [y, z]\nc: {d: e}\n"))
        let mapping = try #require(root.mapping)
        #expect(mapping.map { $0.key.string } == ["b", "a", "c"])
        #expect(mapping["a"]?.mark == YAMLMark(line: 3, column: 3))
        #expect(mapping["b"]?.mark == YAMLMark(line: 1, column: 4))
        let list = try #require(mapping["a"]?.sequence)
        #expect(list.count == 2 && list[0].string == "x")
        #expect(list[1].sequence?.map(\.string) == ["y", "z"])
        #expect(list[1].mark == YAMLMark(line: 4, column: 5))
        #expect(mapping["c"]?.mapping?["d"]?.string == "e")
        #expect(mapping["missing"] == nil)
    }

    @Test("scalars: text after quoting and escapes, style, and the tag (explicit, str for quoted, resolved for plain)")
    func scalarsAndTags() throws {
        let root = try #require(try compose("""
            plain: 12
            single: '12'
            double: "a\\tb"
            tagged: !!str 12
            literal: |
              two
              lines
            bool: off
            null: ~
            hex: 0x1F
            float: 1.5e3
            date: 2001-12-14
            word: hello
            """)?.mapping)
        #expect(root["plain"]?.scalar == YAMLScalar("12", style: .plain))
        #expect(root["plain"]?.tag == YAMLTag.int)
        #expect(root["single"]?.scalar?.style == .singleQuoted && root["single"]?.tag == YAMLTag.str)
        #expect(root["double"]?.string == "a\tb" && root["double"]?.scalar?.style == .doubleQuoted)
        #expect(root["tagged"]?.tag == YAMLTag.str && root["tagged"]?.scalar?.explicitTag == YAMLTag.str)
        #expect(root["literal"]?.string == "two\nlines\n" && root["literal"]?.scalar?.style == .literal)
        #expect(root["bool"]?.tag == YAMLTag.bool)
        #expect(root["null"]?.tag == YAMLTag.null)
        #expect(root["hex"]?.tag == YAMLTag.int)
        #expect(root["float"]?.tag == YAMLTag.float)
        #expect(root["date"]?.tag == YAMLTag.timestamp)
        #expect(root["word"]?.tag == YAMLTag.str)
        // The text is kept as written whatever the tag.
        #expect(root["bool"]?.string == "off" && root["hex"]?.string == "0x1F")
    }

    @Test("YAML 1.1 resolution of plain scalars", arguments: [
        ("yes", YAMLTag.bool), ("No", YAMLTag.bool), ("TRUE", YAMLTag.bool), ("tRue", YAMLTag.str),
        ("0", YAMLTag.int), ("-42", YAMLTag.int), ("+1_000", YAMLTag.int), ("017", YAMLTag.int),
        ("0o17", YAMLTag.int), ("0b1010", YAMLTag.int), ("0x1f", YAMLTag.int), ("1:30", YAMLTag.int),
        ("0x", YAMLTag.str), ("1:60", YAMLTag.str),
        ("1.5", YAMLTag.float), ("1e3", YAMLTag.float), ("-1.", YAMLTag.float), (".5", YAMLTag.float),
        ("1:30.5", YAMLTag.float), ("-.inf", YAMLTag.float), (".NaN", YAMLTag.float), ("1e", YAMLTag.str),
        ("<<", YAMLTag.merge), ("~", YAMLTag.null), ("NULL", YAMLTag.null), ("", YAMLTag.null),
        ("2001-12-14", YAMLTag.timestamp), ("2001-12-14t21:59:43.10-05:00", YAMLTag.timestamp),
        ("2001-12-14 21:59:43.10 Z", YAMLTag.timestamp), ("2001-12-14x", YAMLTag.str),
        ("=", YAMLTag.value), ("25ms", YAMLTag.str), ("KEY_Q", YAMLTag.str),
    ])
    func resolution(text: String, tag: String) {
        #expect(YAMLTag.resolve(plain: text) == tag)
    }

    @Test("an alias is the anchored node, wherever it is used; an anchor defined again names the new node")
    func anchorsAndAliases() throws {
        let root = try #require(try compose("""
            base: &b {keys: 5ms, id: [1, 2]}
            one: *b
            two: *b
            s: &v first
            t: *v
            s2: &v second
            u: *v
            """)?.mapping)
        #expect(root["one"] == root["base"] && root["two"] == root["base"])
        #expect(root["one"]?.mapping?["id"]?.sequence?.count == 2)
        #expect(root["base"]?.mapping?.anchor == "b")
        #expect(root["t"]?.string == "first" && root["u"]?.string == "second")
    }

    @Test("an alias bomb composes at once and its expansion is bounded by expandedCount(limit:)")
    func aliasBomb() throws {
        var text = "x0: &x0 [a, a, a, a, a, a, a, a, a, a]\n"
        for level in 1...9 {
            text += "x\(level): &x\(level) [" + Array(repeating: "*x\(level - 1)", count: 10).joined(separator: ", ") + "]\n"
        }
        let start = ContinuousClock.now
        let root = try #require(try compose(text))
        #expect(root.expandedCount(limit: 10_000) == nil)
        #expect(root.mapping?["x1"]?.expandedCount(limit: 10_000) == 1 + 10 * 11)
        // Equal keys built from the same alias compare in one step, not by walking the bomb;
        // an alias is its anchored node, so the key's mark is the anchor's line (10).
        let keyed = try #require(error(text + "? *x9\n: 1\n? *x9\n: 2\n"))
        #expect(keyed.problem.hasPrefix("duplicate keys") && keyed.mark.line == 10)
        #expect(ContinuousClock.now - start < .seconds(2))
    }

    @Test("an alias without an anchor before it, or inside its own anchored node, is an error at its line")
    func undefinedAlias() {
        #expect(error("a: 1\nb: *nope\n") == YAMLError(stage: .composer, problem: "found undefined alias 'nope'",
                                                        mark: YAMLMark(line: 2, column: 4)))
        #expect(error("a: &self [1, *self]\n")?.problem == "found undefined alias 'self'")
    }

    @Test("duplicate keys: every duplicated key named, sorted, at the first one's first line; 1 and '1' differ")
    func duplicateKeys() throws {
        let e = try #require(error("z: 1\nb: 2\nz: 3\nb: 4\n"))
        #expect(e.stage == .composer && e.duplicateKeys == ["b", "z"] && e.mark.line == 2)
        #expect(e.problem == "duplicate keys 'b', 'z'")
        #expect(error("a: 1\n'a': 2\n")?.duplicateKeys == ["a"])
        #expect(try compose("1: a\n'1': b\n")?.mapping?.count == 2)
        #expect(try compose("1: a\n'1': b\n")?.mapping?["1"]?.string == "a")
    }

    @Test("syntax errors carry libyaml's problem, line and context", arguments: [
        ("a: [1, 2\nb: 3\n", YAMLError.Stage.parser, 2, "did not find expected ',' or ']'", "while parsing a flow sequence", 1),
        ("a: 'open\n", .scanner, 2, "found unexpected end of stream", "while scanning a quoted scalar", 1),
        ("a: 1\n b: 2\n", .scanner, 2, "mapping values are not allowed in this context", nil, nil),
        ("a: 1\n---\nb: 2\n", .composer, 2, "but found another document", "expected a single document in the stream", 1),
    ] as [(String, YAMLError.Stage, Int, String, String?, Int?)])
    func syntaxErrors(text: String, stage: YAMLError.Stage, line: Int, problem: String, context: String?, contextLine: Int?) throws {
        let e = try #require(error(text))
        #expect(e.stage == stage && e.mark.line == line && e.problem == problem)
        #expect(e.context == context && e.contextMark?.line == contextLine)
    }

    @Test("bytes YAML refuses (a control character, bad UTF-8) are reader errors at their line and column")
    func readerErrors() throws {
        let control = try #require(error("a: 1\nb: x\u{1}y\n"))
        #expect(control.stage == .reader && control.mark == YAMLMark(line: 2, column: 5))
        #expect(control.problem == "control characters are not allowed")
    }

    @Test("nesting deeper than maxDepth is an error, not a stack overflow")
    func deepNesting() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let e = try #require(error(deep))
        #expect(e.stage == .composer && e.mark == YAMLMark(line: 1, column: YAMLComposer.maxDepth + 1))
        let fine = String(repeating: "[", count: YAMLComposer.maxDepth) + String(repeating: "]", count: YAMLComposer.maxDepth)
        #expect(try compose(fine)?.sequence != nil)
    }

    @Test("messages: the problem with its context's line, and the position in front")
    func messages() throws {
        let e = try #require(error("a: [1, 2\nb: 3\n"))
        #expect(e.message == "did not find expected ',' or ']' (while parsing a flow sequence at line 1)")
        #expect(e.description == "line 2, column 2: " + e.message)
    }
}
