import DeviceIO
#if canImport(Glibc)
import Glibc
#endif

/// Reading and writing sysfs attributes: small text files, read whole, written with one
/// `write` (sysfs takes an attribute's value in one call).
enum Sysfs {
    /// The attribute's text without its trailing newline; nil when it cannot be read.
    static func read(_ path: String) -> String? {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { Glibc.close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { return nil }
            if n == 0 { break }
            bytes += chunk[0..<n]
        }
        while bytes.last == 10 { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Writes `value` to the attribute; an empty value is written as a newline (what clears
    /// `current_trigger`). `O_TRUNC` is nothing to sysfs, and keeps a regular file standing
    /// for an attribute (tests, umockdev) holding only the value.
    static func write(_ value: String, to path: String) throws(SystemError) {
        let fd = try SystemCall.runBlocking("open(\(path))") { Glibc.open(path, O_WRONLY | O_TRUNC | O_CLOEXEC) }
        defer { Glibc.close(fd) }
        let bytes = Array((value.isEmpty ? "\n" : value).utf8)
        let written = try SystemCall.runBlocking("write(\(path))") {
            bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        }
        if written != bytes.count { throw SystemError(call: "write(\(path))", errno: EIO) }
    }

    /// The names in a directory, sorted; empty when it cannot be listed.
    static func list(_ path: String) -> [String] {
        guard let dir = opendir(path) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    /// Whether `path` exists.
    static func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }

    /// The attribute as a number (integers and the kernel's fixed-point decimals).
    static func number(_ path: String) -> Double? {
        read(path).flatMap { Double($0.trimmingSpaces) }
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and newlines.
    var trimmingSpaces: Substring {
        var s = self[...]
        while let c = s.first, c == " " || c == "\t" || c == "\n" { s = s.dropFirst() }
        while let c = s.last, c == " " || c == "\t" || c == "\n" { s = s.dropLast() }
        return s
    }
}
