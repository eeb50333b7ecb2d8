#if canImport(Glibc)
import Glibc
#endif
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

    // The fd checks run in a child process (an exit test): the process-wide fd count is only
    // the test's own when no other test runs beside it.
    @Test("FileDescriptor: opened and closed explicitly; the process fd count returns")
    func fileDescriptorLifetime() async {
        await #expect(processExitsWith: .success) {
            let before = openFileDescriptorCount()
            let fd = try FileDescriptor.openForReading("/dev/null")
            guard openFileDescriptorCount() == before.map({ $0 + 1 }) else { exit(1) }
            fd.close()
            fd.close()   // idempotent
            guard fd.isClosed, openFileDescriptorCount() == before else { exit(2) }
        }
    }

    @Test("opening a missing node names the path and errno")
    func openMissing() {
        #expect(throws: SystemError(call: "open(/nonexistent/event99)", errno: ENOENT)) {
            _ = try FileDescriptor.openForReading("/nonexistent/event99")
        }
    }

    @Test("a node that is not an evdev device fails at once (ENOTTY) and leaks no fd")
    func evdevOnNonDevice() async {
        #expect(throws: SystemError(call: "libevdev_new_from_fd(/dev/null)", errno: ENOTTY)) {
            _ = try EvdevDevice(path: "/dev/null")
        }
        await #expect(processExitsWith: .success) {
            let before = openFileDescriptorCount()
            guard (try? EvdevDevice(path: "/dev/null")) == nil else { exit(1) }
            guard before != nil, openFileDescriptorCount() == before else { exit(2) }
        }
    }
}
