// The fuzz driver: `evflow-fuzz TARGET [libFuzzer options] [corpus dirs]`.
//
// Built by `scripts/fuzz` with `-sanitize=fuzzer,address -D EVFLOW_LIBFUZZER`, it hands the
// remaining arguments to libFuzzer (`LLVMFuzzerRunDriver`) with the target's invariant check
// as the callback; an invariant failure aborts, so libFuzzer saves the input as a crash.
// Built without that flag (the normal `swift build`), it runs the check over the files given,
// which is how a saved crash is replayed under the debugger.
#if canImport(Glibc)
import Glibc
#endif
import FuzzTargets

/// Writes a line to standard error.
func printError(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

let arguments = CommandLine.arguments
guard arguments.count >= 2, let target = FuzzTarget(rawValue: arguments[1]) else {
    let names = FuzzTarget.allCases.map(\.rawValue).joined(separator: " | ")
    printError("usage: evflow-fuzz (\(names)) [libFuzzer options | files]")
    exit(2)
}

/// The target the C callback runs (a C function pointer captures nothing).
nonisolated(unsafe) var selected = target

#if EVFLOW_LIBFUZZER
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<Int32>,
                         _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32) -> Int32

// libFuzzer sees argv[0] and the arguments after the target name.
var fuzzerArguments = [arguments[0]] + arguments.dropFirst(2)
var cArguments: [UnsafeMutablePointer<CChar>?] = fuzzerArguments.map { strdup($0) } + [nil]
var argc = Int32(fuzzerArguments.count)
let status = cArguments.withUnsafeMutableBufferPointer { buffer in
    var argv = buffer.baseAddress
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in
        let bytes = size == 0 ? [] : Array(UnsafeBufferPointer(start: data, count: size))
        do {
            try selected.check(bytes)
        } catch {
            printError("\(error)")
            abort()
        }
        return 0
    }
}
exit(status)
#else
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
