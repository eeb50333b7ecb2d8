import FileReading
import Foundation
import Testing

/// `BoundedFile.read`, the one reader of configurations and recordings (issue #25 findings
/// 4 and 5, issue #23 item 6): regular files only, never blocking, never past the limit.
@Suite("bounded file reading") struct BoundedFileTests {
    /// A fresh directory, removed by the caller.
    static func scratch() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("evflow-bounded-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    static func refusal(_ path: String, limit: Int = 1 << 20) -> BoundedFileError? {
        do {
            _ = try BoundedFile.read(path, limit: limit)
            return nil
        } catch {
            return error
        }
    }

    @Test("a regular file is read whole, up to and including the limit")
    func regularFile() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("a.yaml")
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0) }   // several read chunks
        try Data(bytes).write(to: file)
        #expect(try BoundedFile.read(file.path, limit: bytes.count) == bytes)
        #expect(Self.refusal(file.path, limit: bytes.count - 1) == BoundedFileError(path: file.path, reason: .tooLarge(limit: bytes.count - 1)))
        try Data().write(to: file)
        #expect(try BoundedFile.read(file.path, limit: 0) == [])
    }

    @Test("a FIFO without a writer is refused at once, not waited on (issue #25 finding 4)")
    func fifo() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("f.yaml").path
        #expect(mkfifo(path, 0o600) == 0)
        // A blocking open would wait for a writer for ever: this test would hang, not fail.
        let error = Self.refusal(path)
        #expect(error == BoundedFileError(path: path, reason: .notARegularFile(.fifo)))
        #expect(error?.description == "\(path): a FIFO (named pipe), not a regular file")
    }

    @Test("a directory is refused, not read as an empty file (issue #25 finding 5)")
    func directory() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        #expect(Self.refusal(dir.path) == BoundedFileError(path: dir.path, reason: .notARegularFile(.directory)))
    }

    @Test("device nodes are refused: /dev/zero (never ends), /dev/null (always empty)")
    func devices() {
        #expect(Self.refusal("/dev/zero") == BoundedFileError(path: "/dev/zero", reason: .notARegularFile(.characterDevice)))
        #expect(Self.refusal("/dev/null") == BoundedFileError(path: "/dev/null", reason: .notARegularFile(.characterDevice)))
    }

    @Test("a missing file says so; a symbolic link to a regular file is read")
    func missingAndLinked() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let missing = dir.appendingPathComponent("none.yaml").path
        #expect(Self.refusal(missing)?.description == "\(missing): no such file")
        let file = dir.appendingPathComponent("real.yaml"), link = dir.appendingPathComponent("link.yaml")
        try Data("version: 1\n".utf8).write(to: file)
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
        #expect(try BoundedFile.read(link.path, limit: 100) == Array("version: 1\n".utf8))
    }

    @Test("limits are shown as people write them")
    func sizes() {
        #expect(BoundedFileError.size(1 << 20) == "1 MiB")
        #expect(BoundedFileError.size(256 << 20) == "256 MiB")
        #expect(BoundedFileError.size(2048) == "2 KiB")
    }
}

extension BoundedFileTests {
    @Test("readHead: the first bytes of a regular file, fewer when it is shorter; a FIFO refused at once")
    func head() throws {
        let dir = try Self.scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let file = dir.appendingPathComponent("s.session")
        try Data("# EVFLOW SESSION 1\nD: d1\n".utf8).write(to: file)
        #expect(try BoundedFile.readHead(file.path, count: 8) == Array("# EVFLOW".utf8))
        #expect(try BoundedFile.readHead(file.path, count: 100) == Array("# EVFLOW SESSION 1\nD: d1\n".utf8))
        let fifo = dir.appendingPathComponent("f.session").path
        #expect(mkfifo(fifo, 0o600) == 0)
        #expect(throws: BoundedFileError(path: fifo, reason: .notARegularFile(.fifo))) {
            try BoundedFile.readHead(fifo, count: 8)
        }
    }
}
