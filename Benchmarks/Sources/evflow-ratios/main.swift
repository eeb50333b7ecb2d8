// evflow-ratios: times every row of the reactive core workloads interleaved in one process
// (floor, evflow, OpenCombine, floor, evflow, ...), checks that the rows' checksums agree,
// and prints a Markdown table of medians and ratios (row time / floor time).
//
//   evflow-ratios [--reps 5] [--scale 1] [--only W1,W5] [--allocs FILE]
//   evflow-ratios --count-allocs [--scale 1] [--only ...]    (under LD_PRELOAD=alloc_counter.so)
//   evflow-ratios --row 'W1:evflow' --n 100000               (one run, for valgrind/perf)
//
// Allocation counts come from a separate process (run.sh) so that timing runs carry no
// interposer at all; `--allocs FILE` merges them into the table.
#if canImport(Glibc)
import Glibc
#endif
import ReactiveWorkloads
import WorkloadKit

/// Every family's workloads, in table order (daemon families go here too).
let allWorkloads: [Workload] = ReactiveWorkloads.all

struct Options {
    var reps = 5
    var scale = 1
    var only: [String]? = nil
    var allocsFile: String? = nil
    var countAllocs = false
    var row: (id: String, label: String)? = nil
    var n: Int? = nil
}

func fail(_ message: String) -> Never {
    FileOutput.standardError("evflow-ratios: \(message)\n")
    exit(1)
}

enum FileOutput {
    static func standardError(_ text: String) {
        var text = text
        text.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}

func parseOptions() -> Options {
    var options = Options()
    var arguments = CommandLine.arguments.dropFirst()
    func value(_ name: String) -> String {
        guard let v = arguments.popFirst() else { fail("\(name) needs a value") }
        return v
    }
    while let argument = arguments.popFirst() {
        switch argument {
        case "--reps": options.reps = Int(value(argument)) ?? 0
        case "--scale": options.scale = Int(value(argument)) ?? 0
        case "--only": options.only = value(argument).split(separator: ",").map(String.init)
        case "--allocs": options.allocsFile = value(argument)
        case "--count-allocs": options.countAllocs = true
        case "--row":
            let spec = value(argument).split(separator: ":").map(String.init)
            guard spec.count == 2 else { fail("--row takes ID:LABEL, e.g. 'W1:evflow'") }
            options.row = (spec[0], spec[1])
        case "--n": options.n = Int(value(argument))
        default: fail("unknown argument \(argument)")
        }
    }
    if options.reps < 1 || options.scale < 1 { fail("--reps and --scale must be ≥ 1") }
    return options
}

func nowNanoseconds() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let mid = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

func formatted(_ value: Double, decimals: Int) -> String {
    var factor = 1.0
    for _ in 0..<decimals { factor *= 10 }
    let rounded = (value * factor).rounded() / factor
    var text = "\(rounded)"
    if let dot = text.firstIndex(of: ".") {
        let have = text.distance(from: dot, to: text.endIndex) - 1
        if have < decimals { text += String(repeating: "0", count: decimals - have) }
        if decimals == 0 { text = String(text[..<dot]) }
    } else if decimals > 0 {
        text += "." + String(repeating: "0", count: decimals)
    }
    return text
}

func formatRate(_ perSecond: Double) -> String {
    if perSecond >= 1e9 { return formatted(perSecond / 1e9, decimals: 2) + " G/s" }
    if perSecond >= 1e6 { return formatted(perSecond / 1e6, decimals: 1) + " M/s" }
    if perSecond >= 1e3 { return formatted(perSecond / 1e3, decimals: 1) + " k/s" }
    return formatted(perSecond, decimals: 0) + " /s"
}

func plural(_ unit: String) -> String {
    unit.hasSuffix("y") ? unit.dropLast() + "ies" : unit + "s"
}

func formatAllocs(_ value: Double) -> String {
    if value == 0 { return "0" }
    if value < 0.001 { return "<0.001" }
    return formatted(value, decimals: value < 10 ? 3 : 1)
}

/// Runs `row` once and checks its checksum against the workload's expected one.
func checkedRun(_ workload: Workload, _ row: WorkloadRow, n: Int, expected: inout Int?) -> Int64 {
    let start = nowNanoseconds()
    let checksum = row.run(n)
    let elapsed = nowNanoseconds() - start
    if let expected, expected != checksum {
        fail("\(workload.id): checksum mismatch: \(row.label) returned \(checksum), expected \(expected)")
    }
    expected = checksum
    return elapsed
}

// MARK: allocation counting (separate process, under the LD_PRELOAD counter)

typealias CountingSwitch = @convention(c) (Int32) -> Void
typealias CountReader = @convention(c) () -> UInt64

func countAllocations(_ workloads: [(Workload, Int)]) {
    guard let handle = dlopen(nil, RTLD_NOW),
          let switchSymbol = dlsym(handle, "evbench_alloc_counting"),
          let readSymbol = dlsym(handle, "evbench_alloc_count")
    else { fail("--count-allocs needs LD_PRELOAD=<alloc_counter.so> (see run.sh)") }
    let setCounting = unsafeBitCast(switchSymbol, to: CountingSwitch.self)
    let readCount = unsafeBitCast(readSymbol, to: CountReader.self)
    for (workload, n) in workloads {
        var expected: Int? = nil
        for row in workload.rows {
            // A small warm-up run first: one-time allocations (type metadata, dispatch
            // threads) are not the workload's.
            _ = checkedRun(workload, row, n: max(n / 100, 1), expected: &expected)
            expected = nil
        }
        for row in workload.rows {
            setCounting(1)
            _ = checkedRun(workload, row, n: n, expected: &expected)
            setCounting(0)
            print("\(workload.id)\t\(row.label)\t\(readCount())\t\(workload.units(n))")
        }
    }
}

func readAllocations(_ path: String) -> [String: Double] {
    guard let file = fopen(path, "r") else { fail("cannot open \(path)") }
    defer { fclose(file) }
    var result: [String: Double] = [:]
    var line: UnsafeMutablePointer<CChar>? = nil
    var capacity = 0
    while getline(&line, &capacity, file) > 0 {
        let fields = String(cString: line!).split(separator: "\t").map {
            $0.trimmingCharacters(in: " \n")
        }
        guard fields.count == 4, let count = Double(fields[2]), let units = Double(fields[3]) else { continue }
        result[fields[0] + "\t" + fields[1]] = count / units
    }
    free(line)
    return result
}

extension Substring {
    func trimmingCharacters(in set: String) -> String {
        var s = self
        while let c = s.first, set.contains(c) { s = s.dropFirst() }
        while let c = s.last, set.contains(c) { s = s.dropLast() }
        return String(s)
    }
}

// MARK: timing

struct RowResult {
    let label: String
    let times: [Double]         // seconds per repetition
    let ratios: [Double]        // row time / floor time, per repetition
    let checksum: Int
}

func timeWorkload(_ workload: Workload, n: Int, reps: Int) -> [RowResult] {
    var expected: Int? = nil
    // Warm-up at a tenth of the size, also a first checksum cross-check at that size.
    for row in workload.rows { _ = checkedRun(workload, row, n: max(n / 10, 1), expected: &expected) }
    expected = nil
    var times = Array(repeating: [Double](), count: workload.rows.count)
    for _ in 0..<reps {
        for (index, row) in workload.rows.enumerated() {
            let elapsed = checkedRun(workload, row, n: n, expected: &expected)
            times[index].append(Double(elapsed) / 1e9)
        }
    }
    return workload.rows.enumerated().map { index, row in
        RowResult(label: row.label, times: times[index],
                  ratios: zip(times[index], times[0]).map { $0 / $1 },
                  checksum: expected ?? 0)
    }
}

func machineNote() -> String {
    var name = utsname()
    uname(&name)
    let machine = withUnsafeBytes(of: &name.machine) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
    let release = withUnsafeBytes(of: &name.release) { String(cString: $0.bindMemory(to: CChar.self).baseAddress!) }
    var model = "unknown CPU"
    if let file = fopen("/proc/cpuinfo", "r") {
        var line: UnsafeMutablePointer<CChar>? = nil
        var capacity = 0
        while getline(&line, &capacity, file) > 0 {
            let text = String(cString: line!)
            if text.hasPrefix("model name") {
                model = text.drop(while: { $0 != ":" }).dropFirst().trimmingCharacters(in: " \n")
                break
            }
        }
        free(line)
        fclose(file)
    }
    let cores = sysconf(Int32(_SC_NPROCESSORS_ONLN))
    return "\(model), \(cores) online cores, Linux \(release) \(machine)"
}

let options = parseOptions()
let selected = allWorkloads.filter { workload in
    options.only.map { $0.contains { workload.id == $0 || workload.id.hasPrefix($0 + " ") } } ?? true
}
if selected.isEmpty { fail("no workload matches --only") }
let sized = selected.map { ($0, max($0.n / options.scale, 1)) }

if let (id, label) = options.row {
    // One row, once, after a small warm-up: the unit of work for callgrind and perf.
    guard let workload = allWorkloads.first(where: { $0.id == id }),
          let row = workload.rows.first(where: { $0.label == label })
    else { fail("no row \(id):\(label)") }
    let n = options.n ?? workload.n
    var expected: Int? = nil
    // A fixed-size warm-up, so that the difference of two sizes cancels it exactly.
    _ = checkedRun(workload, row, n: min(n, 1000), expected: &expected)
    expected = nil
    _ = checkedRun(workload, row, n: n, expected: &expected)
    print("\(id)\t\(label)\t\(n)\t\(workload.units(n))\t\(expected!)")
    exit(0)
}

if options.countAllocs {
    countAllocations(sized)
    exit(0)
}

let allocations = options.allocsFile.map(readAllocations) ?? [:]

print("Machine: \(machineNote()). Release build; \(options.reps) interleaved repetitions per workload" +
      (options.scale == 1 ? "." : "; sizes divided by \(options.scale) (NOT the docs/benchmarks.md sizes)."))
print("Ratio = row time / floor time in the same repetition (median over repetitions; lower is better).")
print("")
print("| workload | row | n | median time | throughput | ratio (row / floor) | ratio range | allocs/unit | checksum |")
print("|---|---|---|---|---|---|---|---|---|")

var verdicts: [String] = []
for (workload, n) in sized {
    let results = timeWorkload(workload, n: n, reps: options.reps)
    let units = Double(workload.units(n))
    for result in results {
        let medianTime = median(result.times)
        let ratio = median(result.ratios)
        let allocs = allocations[workload.id + "\t" + result.label]
        let range = "\(formatted(result.ratios.min()!, decimals: 2))–\(formatted(result.ratios.max()!, decimals: 2))"
        print("| \(workload.id) | \(result.label) | \(n) | \(formatted(medianTime * 1000, decimals: 1)) ms | " +
              "\(formatRate(units / medianTime)) \(plural(workload.unit)) | " +
              "\(result.label == "floor" ? "1 (baseline)" : formatted(ratio, decimals: 2) + "×") | " +
              "\(result.label == "floor" ? "—" : range) | " +
              "\(allocs.map(formatAllocs) ?? "n/a") /\(workload.unit) | \(result.checksum) |")
        if result.label == "evflow" {
            let goal = workload.goal
            var parts: [String] = []
            var met = ratio <= goal.maxRatio
            parts.append("ratio \(formatted(ratio, decimals: 2))× (goal ≤ \(formatted(goal.maxRatio, decimals: 1))×)")
            if let maxAllocs = goal.maxAllocsPerUnit {
                if let allocs {
                    let allocsMet = maxAllocs == 0 ? allocs < 0.001 : allocs <= maxAllocs
                    met = met && allocsMet
                    parts.append("allocs \(formatAllocs(allocs))/\(workload.unit) (goal \(maxAllocs == 0 ? "0" : "≤ " + formatted(maxAllocs, decimals: 0)))")
                } else {
                    parts.append("allocs not measured")
                }
            }
            verdicts.append("| \(workload.id) | \(parts.joined(separator: "; ")) | \(met ? "met" : "**NOT met**") |")
        }
    }
    if let note = workload.missingNote {
        print("| \(workload.id) | OpenCombine | — | — | — | — | — | — | — (\(note)) |")
    }
}
print("")
print("| goal | evflow measured | verdict |")
print("|---|---|---|")
for verdict in verdicts { print(verdict) }
