import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A directory tree standing for sysfs in a temporary directory: attributes are files. Removed
/// by `remove()`.
final class SysfsTree {
    let root: String

    init() {
        var template = Array((NSTemporaryDirectory() + "/evflow-sysfs-XXXXXX").utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        precondition(made != nil, "mkdtemp")
        root = String(cString: template)
    }

    /// Writes `value` (plus a newline, as sysfs shows it) to `root/path`, making directories.
    func set(_ path: String, _ value: String) {
        let url = URL(fileURLWithPath: root + "/" + path)
        try! FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try! (value + "\n").write(to: url, atomically: false, encoding: .utf8)
    }

    /// The attribute's text without its newline.
    func get(_ path: String) -> String {
        (try? String(contentsOfFile: root + "/" + path, encoding: .utf8))?.trimmingCharacters(in: .newlines) ?? "<missing>"
    }

    /// Sets several attributes under `device`.
    func device(_ device: String, _ attributes: [String: String]) -> String {
        for (name, value) in attributes { set(device + "/" + name, value) }
        return root + "/" + device
    }

    func remove() { try? FileManager.default.removeItem(atPath: root) }
}
