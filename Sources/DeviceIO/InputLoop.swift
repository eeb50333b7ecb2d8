import CLinux
import Dispatch
import Reactive
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// evflow's input thread: one thread of its own, waiting in `epoll_wait`, that reads the
/// device fds and the udev monitor socket, fires the pipeline's timers and runs every job
/// scheduled on it — the serial scheduler the input side of the pipeline runs on.
///
/// One wake-up per batch of ready fds, and the handlers run right there: a readable device
/// costs one `epoll_wait` return and the handler's own reads — no hop to another thread, no
/// lock, no pipe write.
///
/// - **Fds** (`register(fd:_:)`, loop thread only) are level-triggered: a handler that stops
///   early while the fd still has data is called again on the next turn. Data the fd no
///   longer shows — libevdev's own queue, filled by an earlier `read` — is the handler's to
///   report: it returns `.morePending` and runs again on the next turn without waiting for
///   the fd. A handler for a token that was unregistered during the same turn is never called
///   (tokens are never reused, so a closed and reused fd number is not confused with it).
/// - **Timers** (`makeTimer`, `schedule(after:)`) live in a binary heap ordered by deadline;
///   one `timerfd` (`CLOCK_MONOTONIC`, absolute) is set to the earliest deadline, and only
///   re-set when that deadline moves earlier, so re-arming a debounce timer per event costs a
///   heap sift and no system call.
/// - **Jobs** (`schedule`) from the loop thread go on a plain array; from any other thread
///   they go on a lock-free stack (compare-and-swap; the loop takes it whole with one
///   exchange, FIFO restored) and the thread is woken through an `eventfd`, written only when
///   the stack was empty. Jobs run in the order they were scheduled, per thread.
///
/// Each turn: run the jobs queued so far (not those they queue: those run next turn, after
/// the fds), fire the timers that are due, then wait for fds (not at all when jobs or
/// pending handlers are waiting) and run their handlers.
///
/// The thread runs until `shutdown()`; jobs and timers that have not run by then are dropped.
public final class InputLoop: SchedulerType, @unchecked Sendable {
    /// Identifies an fd registration; never reused.
    public typealias Token = UInt64

    /// What an fd handler leaves behind.
    public enum Outcome: Sendable {
        /// Everything it could read is read: wait for the fd to be readable again.
        case drained
        /// It stopped early with data already read from the fd still queued in user space
        /// (which epoll cannot see): run it again on the next turn.
        case morePending
    }

    // MARK: Shared with other threads (atomics only)

    private let epollFD: Int32
    private let wakeFD: Int32
    private let timerFD: Int32
    /// The loop thread's `pthread_t`, stored by the thread itself before anything runs on it.
    private let thread = Atomic<UInt>(0)
    private let stopping = Atomic<Bool>(false)
    private let finished = Atomic<Bool>(false)
    /// Jobs scheduled from other threads, newest first.
    private let inbox = Atomic<Unmanaged<Job>?>(nil)

    // MARK: Confined to the loop thread
    //
    // `@exclusivity(unchecked)`: only the loop thread touches these, and no access spans a
    // call out (a handler, job or timer runs after its lookup's access has ended), so the
    // run-time check — a call into the Swift runtime per access, ~3 a wake-up — could never
    // fire; it cost ~330 instructions of U1's frame (docs/benchmarks.md, "U1").

    @exclusivity(unchecked) private var jobs: [() -> Void] = []
    @exclusivity(unchecked) private var running: [() -> Void] = []
    @exclusivity(unchecked) private var handlers = HandlerTable<() -> Outcome>()
    @exclusivity(unchecked) private var pending: [Token] = []
    @exclusivity(unchecked) private var heap = TimerHeap()
    /// The deadline the timerfd is set to (`.max`: not set).
    @exclusivity(unchecked) private var timerFDDeadline = Int64.max

    private static let wakeToken: Token = 1
    private static let timerToken: Token = 2

    /// Starts the thread.
    public init(name: String = "evflow.input") throws(SystemError) {
        let ep = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard ep >= 0 else { throw SystemError(call: "epoll_create1", errno: errno) }
        let wake = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard wake >= 0 else {
            let e = errno
            close(ep)
            throw SystemError(call: "eventfd", errno: e)
        }
        let timer = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_CLOEXEC | TFD_NONBLOCK))
        guard timer >= 0 else {
            let e = errno
            close(ep)
            close(wake)
            throw SystemError(call: "timerfd_create", errno: e)
        }
        epollFD = ep
        wakeFD = wake
        timerFD = timer
        for (fd, token) in [(wake, Self.wakeToken), (timer, Self.timerToken)] {
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.u64 = token
            _ = epoll_ctl(ep, EPOLL_CTL_ADD, fd, &event)
        }
        let box = Unmanaged.passRetained(ThreadStart(loop: self, name: name))
        var handle = pthread_t()
        let rc = pthread_create(&handle, nil, { raw in
            let start = Unmanaged<ThreadStart>.fromOpaque(raw!).takeRetainedValue()
            start.nameThread()
            start.loop.run()
            return nil
        }, box.toOpaque())
        if rc != 0 {
            box.release()
            close(ep)
            close(wake)
            close(timer)
            throw SystemError(call: "pthread_create", errno: rc)
        }
        pthread_detach(handle)
    }

    /// Whether the caller runs on the loop thread.
    public var isCurrent: Bool { thread.load(ordering: .acquiring) == pthread_self() }

    /// Ends the thread after its current turn; it closes its fds on the way out. Jobs and
    /// timers not run by then are dropped (and released). Idempotent; any thread.
    public func shutdown() {
        if stopping.exchange(true, ordering: .acquiringAndReleasing) { return }
        wake()
    }

    /// Whether the thread has ended and closed its fds (after `shutdown()`).
    public var hasFinished: Bool { finished.load(ordering: .acquiring) }

    // MARK: SchedulerType

    /// `CLOCK_MONOTONIC` in nanoseconds (the clock of live input events and of the timers).
    public var now: Int64 { monotonicNow() }

    /// Runs `action` on the loop thread, after the jobs scheduled before it (from the same
    /// thread). Disposing before it starts cancels it.
    @discardableResult
    public func schedule(_ action: @escaping () -> Void) -> Disposable {
        let cancel = BooleanDisposable()
        let action = LiveResources.carry(action)
        enqueue { if !cancel.isDisposed { action() } }
        return cancel
    }

    /// Runs `action` on the loop thread at or after `now + dueTime`.
    @discardableResult
    public func schedule(after dueTime: RxTimeInterval, _ action: @escaping () -> Void) -> Disposable {
        let action = LiveResources.carry(action)
        let timer = LoopTimer(loop: self) { _ in action() }
        timer.oneShot = true
        // Saturating: a due time beyond the clock's range is "never" (issue #34: a replay's
        // step years away trapped here).
        timer.arm(at: monotonicNow().addingSaturated(max(dueTime.nanoseconds, 0)), token: 1)
        return Disposables.create { timer.invalidate() }
    }

    /// A reusable timer on the loop's heap.
    public func makeTimer(_ handler: @escaping (UInt64) -> Void) -> SchedulerTimer {
        LoopTimer(loop: self, handler: LiveResources.carry(handler))
    }

    /// Runs `work` on the loop thread and waits for its result (at once when called there).
    /// For set-up and tests, never on a hot path. Traps if the loop has shut down.
    public func sync<T>(_ work: @escaping () -> T) -> T {
        if isCurrent { return work() }
        precondition(!stopping.load(ordering: .acquiring), "InputLoop.sync after shutdown")
        let result = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        enqueue {
            result.value = work()
            done.signal()
        }
        done.wait()
        return result.value!
    }

    private final class ResultBox<T>: @unchecked Sendable {
        var value: T?
    }

    // MARK: Fds (loop thread only)

    /// What an fd is watched for (hang-up and errors always wake its handler).
    public struct Interest: OptionSet, Sendable {
        /// The bits (not epoll's: `epollEvents` maps them).
        public let rawValue: UInt32
        /// Creates an interest from its bits.
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Data to read (`EPOLLIN`).
        public static let readable = Interest(rawValue: 1)
        /// Room to write (`EPOLLOUT`): for a connection with output queued (sd-bus's).
        public static let writable = Interest(rawValue: 2)

        var epollEvents: UInt32 {
            (contains(.readable) ? EPOLLIN.rawValue : 0) | (contains(.writable) ? EPOLLOUT.rawValue : 0)
        }
    }

    /// Watches `fd` for readability (and hang-up), or for what `interest` says; `handler` runs
    /// on the loop thread. Loop thread only.
    public func register(fd: Int32, interest: Interest = .readable, _ handler: @escaping () -> Outcome) -> Token {
        precondition(isCurrent, "InputLoop.register(fd:) must be called on the loop thread")
        let token = handlers.insert(LiveResources.carry(handler))
        var event = epoll_event()
        event.events = interest.epollEvents
        event.data.u64 = token
        if epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) != 0 {
            // EEXIST/EBADF/ENOMEM/EPERM: a caller's bug or an fd that cannot be watched.
            preconditionFailure("epoll_ctl(ADD, \(fd)): errno \(errno)")
        }
        return token
    }

    /// Changes what `fd` (registered as `token`) is watched for. Loop thread only.
    public func update(_ token: Token, fd: Int32, interest: Interest) {
        precondition(isCurrent, "InputLoop.update must be called on the loop thread")
        guard handlers[token] != nil else { return }
        var event = epoll_event()
        event.events = interest.epollEvents
        event.data.u64 = token
        if epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event) != 0 {
            preconditionFailure("epoll_ctl(MOD, \(fd)): errno \(errno)")
        }
    }

    /// Stops watching `fd` (registered as `token`); afterwards the handler is never called,
    /// and the fd may be closed at once. Loop thread only.
    public func unregister(_ token: Token, fd: Int32) {
        precondition(isCurrent, "InputLoop.unregister must be called on the loop thread")
        guard handlers.remove(token) else { return }
        var event = epoll_event()
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, &event)
    }

    /// Registered fds (diagnostics and tests). Loop thread only.
    public var registrationCount: Int {
        precondition(isCurrent, "InputLoop.registrationCount must be read on the loop thread")
        return handlers.count
    }

    // MARK: Jobs

    func enqueue(_ job: @escaping () -> Void) {
        if isCurrent {
            jobs.append(job)
            return
        }
        let node = Unmanaged.passRetained(Job(job))
        var head = inbox.load(ordering: .relaxed)
        while true {
            node.takeUnretainedValue().next = head
            let (exchanged, current) = inbox.compareExchange(expected: head, desired: node,
                                                             ordering: .acquiringAndReleasing)
            if exchanged { break }
            head = current
        }
        // The loop drains the whole stack after every wake-up: only the push onto an empty
        // stack needs to wake it.
        if head == nil { wake() }
    }

    private func wake() {
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Moves the jobs other threads scheduled onto `jobs`, oldest first.
    private func takeInbox() {
        var node = inbox.exchange(nil, ordering: .acquiring)
        guard node != nil else { return }
        let start = jobs.count
        while let n = node {
            let job = n.takeRetainedValue()
            jobs.append(job.run)
            node = job.next
        }
        jobs[start...].reverse()
    }

    // MARK: Timers (loop thread)

    func arm(_ timer: LoopTimer, at deadline: Int64, token: UInt64) {
        guard !timer.isInvalidated else { return }
        heap.arm(timer, at: deadline, token: token)
    }

    func disarm(_ timer: LoopTimer) { heap.remove(timer) }

    /// Fires every timer whose deadline has passed (each once, with the token of its last arm).
    private func fireDueTimers() {
        guard !heap.isEmpty else { return }
        let now = monotonicNow()
        // One timer at a time, the heap not borrowed while it fires: its handler may arm or
        // disarm timers.
        while let first = heap.first, first.deadline <= now {
            heap.remove(first)
            first.fire()
        }
    }

    /// Points the timerfd at the earliest deadline when that is earlier than what it is set
    /// to. (A later one is left: the early expiry finds nothing due and re-sets it.)
    private func setTimerFD() {
        guard let first = heap.first, first.deadline < timerFDDeadline else { return }
        timerFDDeadline = first.deadline
        var spec = itimerspec()
        // 0 would disarm the timerfd: a deadline at or before boot is "now" anyway.
        let at = max(first.deadline, 1)
        spec.it_value = timespec(tv_sec: Int(at / 1_000_000_000), tv_nsec: Int(at % 1_000_000_000))
        _ = timerfd_settime(timerFD, Int32(TFD_TIMER_ABSTIME), &spec, nil)
    }

    // MARK: The thread

    private func run() {
        thread.store(pthread_self(), ordering: .releasing)
        var events = [epoll_event](repeating: epoll_event(), count: 64)
        var counter: UInt64 = 0
        while !stopping.load(ordering: .acquiring) {
            takeInbox()
            // This turn's jobs; what they schedule runs on the next turn.
            swap(&jobs, &running)
            for job in running { job() }
            running.removeAll(keepingCapacity: true)
            fireDueTimers()
            let again = pending
            pending.removeAll(keepingCapacity: true)
            for token in again {
                if let handler = handlers[token], handler() == .morePending { pending.append(token) }
            }
            if stopping.load(ordering: .relaxed) { break }
            setTimerFD()
            let busy = !jobs.isEmpty || !pending.isEmpty || inbox.load(ordering: .acquiring) != nil
            let n = events.withUnsafeMutableBufferPointer {
                epoll_wait(epollFD, $0.baseAddress, Int32($0.count), busy ? 0 : -1)
            }
            if n < 0 {
                if errno == EINTR { continue }
                preconditionFailure("epoll_wait: errno \(errno)")
            }
            for i in 0..<Int(n) {
                switch events[i].data.u64 {
                case Self.wakeToken:
                    _ = read(wakeFD, &counter, 8)
                case Self.timerToken:
                    _ = read(timerFD, &counter, 8)
                    timerFDDeadline = .max
                case let token:
                    // Unregistered by an earlier handler of this turn: skip.
                    guard let handler = handlers[token] else { continue }
                    if handler() == .morePending && !pending.contains(token) { pending.append(token) }
                }
            }
        }
        // Drop what is left, on this thread (the closures may hold objects confined to it).
        takeInbox()
        jobs = []
        running = []
        handlers.removeAll()
        pending = []
        heap.removeAll()
        close(epollFD)
        close(wakeFD)
        close(timerFD)
        thread.store(0, ordering: .releasing)
        finished.store(true, ordering: .releasing)
    }

    private final class ThreadStart {
        let loop: InputLoop
        let name: String
        init(loop: InputLoop, name: String) {
            self.loop = loop
            self.name = name
        }

        /// The name `top -H` and `ps -L` show (`pthread_setname_np` is not exported to Swift).
        func nameThread() {
            let fd = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { return }
            let bytes = Array(name.utf8.prefix(15))
            _ = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
    }

    private final class Job {
        let run: () -> Void
        var next: Unmanaged<Job>?
        init(_ run: @escaping () -> Void) { self.run = run }
    }
}
