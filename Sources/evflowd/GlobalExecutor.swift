@preconcurrency import CSwiftRuntime
import NIOCore
import NIOPosix

/// Swift concurrency's global executor, moved from libdispatch's worker pool to the process's
/// one NIO event loop group (epoll, sleeping when there is nothing to do), which also serves
/// the socket.
///
/// Why: libdispatch starts a monitor of its worker pool with the first worker thread of a
/// global queue, a timer that fires once a second for the life of the process. On the default
/// executor the first `async` job starts it, and an idle evflowd would wake every second
/// (docs/benchmarks.md, I1).
///
/// How: the runtime calls `swift_task_enqueueGlobal_hook`, when set, for every global job;
/// the hook hands the job to an event loop, which runs it *as a global job*: with no isolation
/// and the global concurrent executor as its task executor, as the runtime's own pool runs it.
/// NIO's takeover (and evflowd's until issue #25) ran it on the event loop's *serial* executor
/// instead: the task then counted as isolated to that loop, so every call into nonisolated
/// async code was a hop back to the global executor — a suspension — even
/// `withUnsafeThrowingContinuation` between its `await` and its closure. swift-async-algorithms'
/// `merge` (behind service-lifecycle's `cancelOnGracefulShutdown`) holds a lock across exactly
/// that, "safe since the closure runs straight away": the task suspended holding it, and a
/// cancellation that ran first on the same thread blocked on the lock for good (SIGTERM soon
/// after start hung evflowd; scripts/check-lifecycle).
///
/// Why a hook and no public API: Swift 6.3 has the custom global executor API
/// (`ExecutorFactory`, `_createExecutors`) only as `@_spi(ExperimentalCustomExecutors)`;
/// `withTaskExecutorPreference` is public but reaches structured child tasks only, and the
/// unstructured `Task {}`s that service-lifecycle and swift-async-algorithms start would still
/// go to libdispatch. NIO's own takeover
/// (`NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()`)
/// finds the hook with `dlsym`, which fails in a binary linked with `--static-swift-stdlib`
/// (the symbol is not exported), and runs jobs on the serial executor as above: evflowd links
/// to the hook directly (CShims/CSwiftRuntime).
///
/// Not covered: delayed jobs (`Task.sleep`) still go to libdispatch; evflowd's own timers
/// are on the input loop.
enum GlobalExecutor {
    private typealias Hook = @convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void

    /// The process's one event loop group: one thread, shared by Swift concurrency's jobs
    /// (service start-up and shutdown, signals, sd_notify: short jobs, nothing blocks there)
    /// and the socket server. One thread is enough for both, and each thread more is memory
    /// and, idle or not, one more epoll set.
    static let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)

    /// Installs the hook; call once, in `main`, before any task exists.
    /// Returns false if a hook was set already (someone else took the executor over).
    static func installNIOEventLoops() -> Bool {
        guard swift_task_enqueueGlobal_hook == nil else { return false }
        // `GlobalExecutor.` spelled out: an implicit `Self` in a thin closure crashes swiftc
        // 6.3 (its SendNonSendable pass).
        let hook: Hook = { job, _ in GlobalExecutor.enqueue(job) }
        precondition(MemoryLayout<Hook>.size == MemoryLayout<UnsafeMutableRawPointer>.size,
                     "a thin function is one pointer")
        swift_task_enqueueGlobal_hook = unsafeBitCast(hook, to: UnsafeMutableRawPointer.self)
        return true
    }

    /// Runs `job` on an event loop of `group` as the runtime's global pool would: not isolated
    /// to the loop (see above).
    fileprivate static func enqueue(_ job: UnownedJob) {
        group.any().execute {
            job.runSynchronously(on: globalConcurrentExecutor.asUnownedTaskExecutor())
        }
    }
}
