#ifndef EVFLOW_CSWIFTRUNTIME_H
#define EVFLOW_CSWIFTRUNTIME_H

// swift_task_enqueueGlobal_hook (swift/include/swift/Runtime/ConcurrencyHooks.def): when
// set, the runtime calls it instead of enqueueing a global job on libdispatch. Its real
// type is a Swift-calling-convention function pointer
// `void (*)(Job *job, void (*original)(Job *))`; it is declared as an opaque pointer here and
// set from Swift. A GLOBAL PROTECTED symbol of libswift_Concurrency.a, so a binary linked
// with --static-swift-stdlib can use it too (dlsym cannot find it there: not exported).
extern void *_Nullable swift_task_enqueueGlobal_hook;

#endif
