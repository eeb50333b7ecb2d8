import Reactive
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Waits for fd readiness on its own thread (`poll`) and runs each fd's handler on the
/// scheduler's serial queue.
///
/// Why not `DispatchSource.makeReadSource`: on Linux, libdispatch's epoll bookkeeping has a
/// use-after-free when read sources are torn down while events are pending
/// (swift-corelibs-libdispatch issue #949). Hot-plug is exactly that — every removal tears a
/// source down while the fd reports POLLHUP — and the e2e suite crashed in
/// `_dispatch_event_loop_drain` about once in eight runs. Here registrations are looked up by
/// token under a lock, so readiness of a registration that is already gone is ignored.
/// (`poll` rather than epoll: Swift's Glibc module does not export `<sys/epoll.h>`, and a
/// machine has tens of input devices, not thousands.)
///
/// A ready fd is not watched again until its handler has run on the queue (one-shot, then
/// re-armed), and readiness is level-triggered, so a handler may stop early and is called
/// again while the fd has data. Data the fd no longer shows — libevdev's own queue, filled by
/// an earlier `read` — is the handler's to report: it returns `.morePending`, and it runs
/// again on the queue (after the work queued meanwhile) without waiting for the fd. No
/// polling in the busy sense: the thread sleeps in `poll(-1)`.
final class ReadinessLoop: @unchecked Sendable {
    typealias Token = UInt64

    /// What a handler leaves behind.
    enum Outcome {
        /// Everything it could read is read: wait for the fd to be readable again.
        case drained
        /// It stopped early with data already read from the fd still queued in user space
        /// (which `poll` cannot see): run it again on the queue.
        case morePending
    }

    /// Handlers only ever run on the scheduler's queue; the lock just hands them over.
    private struct Handler: @unchecked Sendable {
        let run: () -> Outcome
    }

    private struct Registration {
        let fd: Int32
        let handler: Handler
        var armed = true
    }

    private struct State {
        var registrations: [Token: Registration] = [:]
        var nextToken: Token = 1
        var stopped = false
    }

    private let scheduler: SerialDispatchQueueScheduler
    private let state = Mutex(State())
    /// A pipe that wakes the thread when the set of armed fds changes or on stop.
    private let wakeRead: Int32
    private let wakeWrite: Int32

    init(scheduler: SerialDispatchQueueScheduler) throws(SystemError) {
        self.scheduler = scheduler
        var fds: [Int32] = [-1, -1]
        _ = try SystemCall.runBlocking("pipe") { pipe(&fds) }
        for fd in fds {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        }
        wakeRead = fds[0]
        wakeWrite = fds[1]
        let box = Unmanaged.passRetained(self)
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { raw in
            let loop = Unmanaged<ReadinessLoop>.fromOpaque(raw!).takeRetainedValue()
            loop.run()
            return nil
        }, box.toOpaque())
        if rc != 0 {
            box.release()
            close(wakeRead)
            close(wakeWrite)
            throw SystemError(call: "pthread_create", errno: rc)
        }
        pthread_detach(thread)
    }

    /// Watches `fd` for readability (and hang-up); `handler` runs on the scheduler's queue.
    func register(fd: Int32, handler: @escaping () -> Outcome) -> Token {
        let boxed = Handler(run: handler)
        let token = state.withLock { s -> Token in
            let t = s.nextToken
            s.nextToken += 1
            s.registrations[t] = Registration(fd: fd, handler: boxed)
            return t
        }
        wake()
        return token
    }

    /// Stops watching; afterwards the handler is never called and the fd may be closed at once
    /// (the thread only ever polls fds that are still registered, and re-reads the set after
    /// every wake-up, so a closed and reused fd number is not confused with the old one).
    func unregister(_ token: Token) {
        _ = state.withLock { $0.registrations.removeValue(forKey: token) }
        wake()
    }

    /// Ends the thread; it closes its pipe on the way out.
    func stop() {
        state.withLock { s in
            s.stopped = true
            s.registrations = [:]
        }
        wake()
    }

    private func wake() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    private func run() {
        var pollfds: [pollfd] = []
        var tokens: [Token] = []
        var drain = [UInt8](repeating: 0, count: 64)
        while true {
            pollfds.removeAll(keepingCapacity: true)
            tokens.removeAll(keepingCapacity: true)
            pollfds.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
            let stopped = state.withLock { s -> Bool in
                for (token, r) in s.registrations where r.armed {
                    pollfds.append(pollfd(fd: r.fd, events: Int16(POLLIN), revents: 0))
                    tokens.append(token)
                }
                return s.stopped
            }
            if stopped { break }
            let n = poll(&pollfds, nfds_t(pollfds.count), -1)
            if n < 0 {
                if errno == EINTR { continue }
                break
            }
            if pollfds[0].revents != 0 {
                while read(wakeRead, &drain, drain.count) > 0 {}
            }
            for i in 1..<pollfds.count where pollfds[i].revents != 0 {
                let token = tokens[i - 1]
                // Disarm; skip if it was unregistered (or re-registered under a new token) meanwhile.
                let ready = state.withLock { s -> Bool in
                    guard s.registrations[token]?.armed == true else { return false }
                    s.registrations[token]!.armed = false
                    return true
                }
                if ready { scheduler.schedule { [self] in fire(token) } }
            }
        }
        close(wakeRead)
        close(wakeWrite)
    }

    /// On the queue: run the handler, then re-arm unless it unregistered itself — or, when it
    /// left data pending, run it again after what is queued meanwhile (still disarmed).
    private func fire(_ token: Token) {
        guard let handler = state.withLock({ $0.registrations[token]?.handler }) else { return }
        if handler.run() == .morePending {
            scheduler.schedule { [self] in fire(token) }
            return
        }
        let rearmed = state.withLock { s -> Bool in
            guard s.registrations[token] != nil else { return false }
            s.registrations[token]!.armed = true
            return true
        }
        if rearmed { wake() }
    }
}
