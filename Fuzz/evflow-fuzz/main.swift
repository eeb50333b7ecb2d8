// The fuzz driver.
//
// Built by `scripts/fuzz` with `-sanitize=fuzzer,address -D EVFLOW_LIBFUZZER`, it is a
// libFuzzer target (`EVFLOW_FUZZ_TARGET=TARGET evflow-fuzz [libFuzzer options] [corpus dirs]`)
// whose callback runs the target's invariant check; an invariant failure aborts, so libFuzzer
// saves the input as a crash. Built without that flag (the normal `swift build`), it is
// `evflow-fuzz TARGET FILE...`: the check over saved inputs, for replaying a crash under the
// debugger.
#if canImport(Glibc)
import Glibc
#endif
import FuzzTargets

/// Writes a line to standard error.
func printError(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

#if EVFLOW_LIBFUZZER
// This file's top-level code hands the command line to libFuzzer (`LLVMFuzzerRunDriver`),
// which calls the two entry points below; the target comes from EVFLOW_FUZZ_TARGET
// (scripts/fuzz sets it). The entry points have libFuzzer's standard names, so the binary
// also works with libFuzzer's own `main` should a toolchain link that one instead.

/// The target the fuzzer runs, chosen once in `LLVMFuzzerInitialize`.
nonisolated(unsafe) var fuzzTarget: FuzzTarget?

@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<Int32>,
                             _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: " | ")
    guard let name = getenv("EVFLOW_FUZZ_TARGET").map({ String(cString: $0) }),
          let target = FuzzTarget(rawValue: name) else {
        printError("evflow-fuzz: set EVFLOW_FUZZ_TARGET to one of: \(names)")
        exit(2)
    }
    fuzzTarget = target
    return 0
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
    do {
        try fuzzTarget!.check(bytes)
    } catch {
        // libFuzzer saves the input that aborted as a crash artifact.
        printError("\(error)")
        abort()
    }
    return 0
}
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<Int32>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

var cArguments: [UnsafeMutablePointer<CChar>?] = CommandLine.arguments.map { strdup($0) } + [nil]
var argc = Int32(CommandLine.arguments.count)
let status = cArguments.withUnsafeMutableBufferPointer { buffer in
    var argv = buffer.baseAddress
    _ = fuzzerInitialize(&argc, &argv)
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzerTestOneInput(data, size) }
}
exit(status)
#else
let arguments = CommandLine.arguments
guard arguments.count >= 2, let selected = FuzzTarget(rawValue: arguments[1]) else {
    let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: " | ")
    printError("usage: evflow-fuzz (\(names)) FILE...   (replays saved inputs; scripts/fuzz builds the fuzzer)")
    exit(2)
}
var failed = 0
for path in arguments.dropFirst(2) {
    guard let file = fopen(path, "rb") else { printError("\(path): cannot open"); exit(2) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&chunk, 1, chunk.count, file)
        if n <= 0 { break }
        bytes += chunk[0..<n]
    }
    fclose(file)
    do {
        try selected.check(bytes)
        print("\(path): ok")
    } catch {
        print("\(path): \(error)")
        failed += 1
    }
}
exit(failed == 0 ? 0 : 1)
#endif
