@preconcurrency import CSwiftRuntime
import NIOCore
import NIOPosix

/// Swift concurrency's global executor, moved from libdispatch's worker pool to NIO's
/// singleton event loops (epoll, sleeping when there is nothing to do).
///
/// Why: libdispatch starts a monitor of its worker pool with the first worker thread of a
/// global queue, a timer that fires once a second for the life of the process. On the default
/// executor the first `async` job starts it, and an idle evflowd would wake every second
/// (docs/benchmarks.md, I1).
///
/// How: the runtime calls `swift_task_enqueueGlobal_hook`, when set, for every global job;
/// the hook hands the job to an event loop, which runs it as NIO's own takeover does. NIO's
/// `NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()`
/// finds the hook with `dlsym`, which fails in a binary linked with `--static-swift-stdlib`
/// (the symbol is not exported): evflowd links to it directly (CShims/CSwiftRuntime).
///
/// Not covered: delayed jobs (`Task.sleep`) still go to libdispatch; evflowd's own timers
/// are on the input loop.
enum GlobalExecutor {
    private typealias Hook = @convention(thin) (UnownedJob, @convention(thin) (UnownedJob) -> Void) -> Void

    /// Installs the hook; call once, first thing in `main`, before any task exists.
    /// Returns false if a hook was set already (someone else took the executor over).
    static func installNIOEventLoops() -> Bool {
        guard swift_task_enqueueGlobal_hook == nil else { return false }
        let hook: Hook = { job, _ in
            MultiThreadedEventLoopGroup.singleton.any().executor.enqueue(job)
        }
        precondition(MemoryLayout<Hook>.size == MemoryLayout<UnsafeMutableRawPointer>.size,
                     "a thin function is one pointer")
        swift_task_enqueueGlobal_hook = unsafeBitCast(hook, to: UnsafeMutableRawPointer.self)
        return true
    }
}
