#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Recording

/// The recordings `evflowd --demo` replays: real devices recorded by other people (the
/// evemu-devices collection, MIT; its licence travels with them). They are data files, not
/// part of the binary: an installed evflowd finds them under its prefix, and one built in a
/// source checkout finds the checkout's test fixtures.
///
/// The places searched, in order, for an executable at `<dir>/evflowd`:
/// 1. `<dir>/../share/evflow/demo` — where `scripts/install` puts them (`PREFIX/share/evflow/demo`);
/// 2. `<ancestor>/Tests/Fixtures/recordings/evemu-devices` for `<dir>` and each of its ancestors —
///    a source checkout (`swift build` leaves the executable in `.build/<triple>/<configuration>`).
///
/// A place counts only when it holds every file of `files`.
enum DemoRecordings {
    /// The recordings, relative to the demo directory (the evemu-devices collection's layout,
    /// which `scripts/install` keeps).
    static let files = [
        "misc/Microsoft Surface Type Cover.events",
        "mice/Ultrathin Touch Mouse.events",
    ]

    /// The installed demo directory, relative to the prefix.
    static let installedDirectory = "share/evflow/demo"
    /// The demo directory in a source checkout, relative to the checkout.
    static let checkoutDirectory = "Tests/Fixtures/recordings/evemu-devices"

    /// No place holds the demo recordings.
    struct NotFound: Error, CustomStringConvertible {
        /// Every place looked in, in search order.
        public let searched: [String]

        public var description: String {
            "the demo recordings (\(DemoRecordings.files.joined(separator: ", "))) were not found; looked in: "
                + searched.joined(separator: ", ")
        }
    }

    /// The places searched for an executable at `executablePath` (absolute), in order.
    static func searchPlaces(executablePath: String) -> [String] {
        let directory = parent(of: executablePath)
        var places = [join(parent(of: directory), installedDirectory)]
        var ancestor = directory
        while true {
            places.append(join(ancestor, checkoutDirectory))
            if ancestor == "/" { break }
            ancestor = parent(of: ancestor)
        }
        return places
    }

    /// The first place that holds every recording.
    static func locate(executablePath: String) throws(NotFound) -> String {
        let places = searchPlaces(executablePath: executablePath)
        let files = FileManager.default
        for place in places where Self.files.allSatisfy({ files.fileExists(atPath: join(place, $0)) }) {
            return place
        }
        throw NotFound(searched: places)
    }

    /// Reads the recordings in `directory` (a place `locate` returned).
    static func read(from directory: String) throws(RecordingError) -> [Recording] {
        var recordings: [Recording] = []
        for file in files {
            recordings.append(try Recording.read(contentsOf: URL(fileURLWithPath: join(directory, file))))
        }
        return recordings
    }

    /// `path` without its last component (`/` stays `/`).
    private static func parent(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }

    private static func join(_ directory: String, _ relative: String) -> String {
        directory.hasSuffix("/") ? directory + relative : directory + "/" + relative
    }
}
