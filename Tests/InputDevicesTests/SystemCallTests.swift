#if canImport(Glibc)
import Glibc
#endif
@testable import DeviceIO
@testable import InputDevices
import ReactiveTesting
import Testing

@Suite("errno funnel", .ownLiveResources)
struct SystemCallTests {
    @Test("EINTR is retried until the call answers")
    func retriesEINTR() throws {
        var calls = 0
        let result = try SystemCall.run("read(test)") { () -> Int in
            calls += 1
            if calls < 3 {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(result == .done(7))
        #expect(calls == 3)
    }

    @Test("EAGAIN becomes wouldBlock, not an error")
    func mapsEAGAIN() throws {
        let result = try SystemCall.run("read(test)") { () -> Int in
            errno = EAGAIN
            return -1
        }
        #expect(result == .wouldBlock)
        #expect(try SystemCall.runNegativeErrno("libevdev_next_event") { -EAGAIN } == .wouldBlock)
    }

    @Test("other errors throw a typed error naming the call")
    func throwsNamedError() {
        #expect(throws: SystemError(call: "open(/x)", errno: EACCES)) {
            _ = try SystemCall.run("open(/x)") { () -> Int32 in
                errno = EACCES
                return -1
            }
        }
        let error = SystemError(call: "open(/x)", errno: EACCES)
        #expect(error.isPermissionDenied)
        #expect(!error.isNoDevice)
        #expect(error.description == "open(/x): Permission denied (errno 13)")
        #expect(SystemError(call: "y", errno: EPERM).isPermissionDenied)
        #expect(SystemError(call: "y", errno: ENODEV).isNoDevice)
    }

    @Test("negative-errno calls: -EINTR retried, -ENODEV thrown, results passed through")
    func negativeErrno() throws {
        var calls = 0
        let result = try SystemCall.runNegativeErrno("libevdev_next_event(test)") { () -> Int32 in
            calls += 1
            return calls == 1 ? -EINTR : 1
        }
        #expect(result == .done(1))
        #expect(throws: SystemError(call: "libevdev_next_event(test)", errno: ENODEV)) {
            _ = try SystemCall.runNegativeErrno("libevdev_next_event(test)") { -ENODEV }
        }
    }

    @Test("runBlocking treats a would-block answer as an error")
    func runBlockingAgain() {
        #expect(throws: SystemError(call: "open(z)", errno: EAGAIN)) {
            _ = try SystemCall.runBlocking("open(z)") { () -> Int32 in
                errno = EAGAIN
                return -1
            }
        }
    }

    // fd checks count the fds open on one file of the test's own (readlink of /proc/self/fd/*),
    // not the process's fd total: other tests and the test runtime's own threads open and close
    // fds beside it (the child process of an exit test too: CI saw its total move by one).
    @Test("FileDescriptor: opened and closed explicitly; no fd on the file remains")
    func fileDescriptorLifetime() throws {
        let file = try TemporaryFile()
        let fd = try FileDescriptor.openForReading(file.path)
        #expect(openFileDescriptors(on: file.path) == 1)
        fd.close()
        fd.close()   // idempotent
        #expect(fd.isClosed)
        #expect(openFileDescriptors(on: file.path) == 0)
    }

    @Test("opening a missing node names the path and errno")
    func openMissing() {
        #expect(throws: SystemError(call: "open(/nonexistent/event99)", errno: ENOENT)) {
            _ = try FileDescriptor.openForReading("/nonexistent/event99")
        }
    }

    @Test("a node that is not an evdev device fails at once (ENOTTY) and leaks no fd")
    func evdevOnNonDevice() throws {
        #expect(throws: SystemError(call: "libevdev_new_from_fd(/dev/null)", errno: ENOTTY)) {
            _ = try EvdevDevice(path: "/dev/null")
        }
        let file = try TemporaryFile()
        for _ in 0..<20 {
            #expect(throws: SystemError(call: "libevdev_new_from_fd(\(file.path))", errno: ENOTTY)) {
                _ = try EvdevDevice(path: file.path)
            }
        }
        #expect(openFileDescriptors(on: file.path) == 0)
    }
}

/// An empty file of the test's own, removed when it goes.
private final class TemporaryFile {
    let path: String

    init() throws {
        var template = Array("/tmp/evflow-fd-test-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        guard fd >= 0 else { throw SystemError(call: "mkstemp", errno: errno) }
        Glibc.close(fd)
        path = String(cString: template)
    }

    deinit { unlink(path) }
}

/// How many of this process's fds are open on `path`.
private func openFileDescriptors(on path: String) -> Int {
    guard let dir = opendir("/proc/self/fd") else { return -1 }
    defer { closedir(dir) }
    var count = 0
    var target = [CChar](repeating: 0, count: 4096)
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard name != ".", name != ".." else { continue }
        let length = readlink("/proc/self/fd/\(name)", &target, target.count - 1)
        guard length > 0 else { continue }
        if String(decoding: target[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self) == path { count += 1 }
    }
    return count
}
