// swift-tools-version:6.1
import PackageDescription

// The benchmark package: its own package so that the main package and CI never resolve or
// build package-benchmark and OpenCombine. It depends on the root package by path.
//
// Layout (add a daemon workload the same way):
//   Sources/WorkloadKit/            Workload / WorkloadRow / WorkloadGoal, shared by every family
//   Sources/<Family>Workloads/      the workloads, one function per row, each returning a checksum
//   Sources/evflow-ratios/          the interleaved ratio runner (Markdown table)
//   Benchmarks/<Family>/            package-benchmark suites (`swift package benchmark`); the
//                                   plugin requires suites under a folder named Benchmarks/
//   alloc-counter/                  the LD_PRELOAD malloc counter run.sh builds with cc
// The evflow checkout to measure: the enclosing working tree by default; run.sh --commit REV
// points EVFLOW_ROOT at an exported snapshot of one commit instead.
let evflowRoot = Context.environment["EVFLOW_ROOT"] ?? ".."
let evflowReactive = Target.Dependency.product(name: "Reactive", package: "evflow")
let benchmarkLibrary = Target.Dependency.product(name: "Benchmark", package: "benchmark")
let benchmarkPlugin = Target.PluginUsage.plugin(name: "BenchmarkPlugin", package: "benchmark")

let package = Package(
    name: "evflow-benchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "evflow", path: evflowRoot),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/OpenCombine/OpenCombine", from: "0.14.0"),
    ],
    targets: [
        .target(name: "WorkloadKit"),
        // W1–W5: floor, evflow and OpenCombine rows of the reactive core workloads.
        .target(
            name: "ReactiveWorkloads",
            dependencies: [
                "WorkloadKit",
                evflowReactive,
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "OpenCombineDispatch", package: "OpenCombine"),
            ]
        ),
        // Interleaved timing of every row, ratios against the floor, checksums, allocations.
        // Add a family's target here and to `allWorkloads` in its main.swift.
        .executableTarget(name: "evflow-ratios", dependencies: ["WorkloadKit", "ReactiveWorkloads"]),
        // The same rows as package-benchmark suites (malloc counts from its MallocInterposer).
        .executableTarget(
            name: "ReactiveCore",
            dependencies: ["ReactiveWorkloads", benchmarkLibrary],
            path: "Benchmarks/ReactiveCore",
            plugins: [benchmarkPlugin]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// R1 (daemon replay throughput, docs/benchmarks.md "Daemon: R1"): parse + full default filter
// pipeline + state store in virtual time. It needs the root package to export InputModel,
// Recording and Pipeline as library products; until the root Package.swift does, the target is
// left out so that the other rows still build.
import Foundation
let evflowManifest = (try? String(contentsOfFile: (evflowRoot.hasPrefix("/") ? evflowRoot
    : Context.packageDirectory + "/" + evflowRoot) + "/Package.swift", encoding: .utf8)) ?? ""
// `DeviceStream` has its own module since issue #23 (in InputModel before): a commit that
// exports DeviceStreams gets it, an older one finds the type in InputModel.
let deviceStreams: [Target.Dependency] = evflowManifest.contains(".library(name: \"DeviceStreams\"")
    ? [.product(name: "DeviceStreams", package: "evflow")] : []
if ["InputModel", "Recording", "Pipeline"].allSatisfy({ evflowManifest.contains(".library(name: \"\($0)\"") }) {
    package.targets.append(.executableTarget(name: "ReplayThroughput", dependencies: [
        .product(name: "InputModel", package: "evflow"),
        .product(name: "Recording", package: "evflow"),
        .product(name: "Pipeline", package: "evflow"),
        evflowReactive,
    ] + deviceStreams))
}

// L1 and M1 (docs/benchmarks.md "Daemon: L1", "Daemon: M1"): the state server's latency and the
// daemon's memory; they need the root package to export StateServer (and Pipeline, Recording,
// InputModel) as library products, left out otherwise like R1. `Logging` comes with StateServer.
if ["InputModel", "Recording", "Pipeline", "StateServer"].allSatisfy({ evflowManifest.contains(".library(name: \"\($0)\"") }) {
    let daemon: [Target.Dependency] = [
        .product(name: "StateServer", package: "evflow"),
        .product(name: "Pipeline", package: "evflow"),
        .product(name: "Recording", package: "evflow"),
        .product(name: "InputModel", package: "evflow"),
        evflowReactive,
    ]
    // L1's fd rows read through evflow's input thread (InputLoop), exported since issue #10.
    let inputDevices: [Target.Dependency] = evflowManifest.contains(".library(name: \"InputDevices\"")
        ? [.product(name: "InputDevices", package: "evflow")] : []
    package.targets.append(.executableTarget(name: "LatencyBench", dependencies: daemon + inputDevices + deviceStreams))
    package.targets.append(.executableTarget(name: "MemoryBench", dependencies: daemon))
}

// P1 (docs/benchmarks.md "Protocol: P1"): FRAME encoded by hand vs with Codable. It needs the
// root package to export EvflowProtocol and InputModel; left out otherwise like R1.
if ["InputModel", "EvflowProtocol"].allSatisfy({ evflowManifest.contains(".library(name: \"\($0)\"") }) {
    package.targets.append(.executableTarget(name: "FrameEncoding", dependencies: [
        .product(name: "EvflowProtocol", package: "evflow"),
        .product(name: "InputModel", package: "evflow"),
    ]))
}
