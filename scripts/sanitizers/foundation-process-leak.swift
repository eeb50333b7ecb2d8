// Reproduces the one leak scripts/sanitizers/lsan.supp suppresses, outside evflow:
//
//   swiftc -sanitize=address scripts/sanitizers/foundation-process-leak.swift -o /tmp/repro
//   ASAN_OPTIONS=detect_leaks=1 /tmp/repro
//
// reports "Direct leak of 32 byte(s)" allocated by swift_weakAssign inside
// Foundation.Process.run() (swift-corelibs-foundation, Swift 6.3.1): run() stores the calling
// thread's RunLoop in a weak reference, and that weak reference's side table is never freed
// when Process.run is called from a concurrency pool thread — as every swift-testing test is.
import Foundation

let done = DispatchSemaphore(value: 0)
Task.detached {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/bin/true")
    try! p.run()
    p.waitUntilExit()
    done.signal()
}
done.wait()
