// swift-tools-version:6.0
import PackageDescription

// Module graph (see docs/architecture.md): nothing imports "upward"; the C shims are imported
// by one module each (InputDevices owns libevdev's handles; InputModel keeps libevdev's names as
// Swift data, scripts/event-names, so the protocol clients link no libevdev). InputModel and
// EvflowProtocol depend on no reactive core, C library or package: scripts/check-module-deps.
let package = Package(
    name: "evflow",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Reactive", targets: ["Reactive"]),
        .library(name: "ReactiveTesting", targets: ["ReactiveTesting"]),
        .library(name: "InputModel", targets: ["InputModel"]),
        .library(name: "DeviceStreams", targets: ["DeviceStreams"]),
        .library(name: "DeviceIO", targets: ["DeviceIO"]),
        .library(name: "InputDevices", targets: ["InputDevices"]),
        .library(name: "Sensors", targets: ["Sensors"]),
        .library(name: "YAML", targets: ["YAML"]),
        .library(name: "FileReading", targets: ["FileReading"]),
        .library(name: "Recording", targets: ["Recording"]),
        .library(name: "Pipeline", targets: ["Pipeline"]),
        .library(name: "NoiseAnalysis", targets: ["NoiseAnalysis"]),
        .library(name: "EvflowProtocol", targets: ["EvflowProtocol"]),
        .library(name: "StateServer", targets: ["StateServer"]),
        .executable(name: "evflowd", targets: ["evflowd"]),
        .executable(name: "evflowctl", targets: ["evflowctl"]),
        .executable(name: "evflow-mqtt", targets: ["evflow-mqtt"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.1.0"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.1.0"),
    ],
    targets: [
        // C shims: module maps + forwarding headers only.
        .systemLibrary(name: "CEvdev", path: "CShims/CEvdev", pkgConfig: "libevdev",
                       providers: [.apt(["libevdev-dev"])]),
        .systemLibrary(name: "CUdev", path: "CShims/CUdev", pkgConfig: "libudev",
                       providers: [.apt(["libudev-dev"])]),
        .systemLibrary(name: "CSystemd", path: "CShims/CSystemd", pkgConfig: "libsystemd",
                       providers: [.apt(["libsystemd-dev"])]),
        .systemLibrary(name: "CLinux", path: "CShims/CLinux"),
        .systemLibrary(name: "CSwiftRuntime", path: "CShims/CSwiftRuntime"),
        .systemLibrary(name: "CYAML", path: "CShims/CYAML", pkgConfig: "yaml-0.1",
                       providers: [.apt(["libyaml-dev"])]),
        .systemLibrary(name: "CMosquitto", path: "CShims/CMosquitto", pkgConfig: "libmosquitto",
                       providers: [.apt(["libmosquitto-dev"])]),

        .target(name: "Reactive"),
        .target(name: "ReactiveTesting", dependencies: ["Reactive"]),
        // Plain values and names only (no Reactive, no C library): the protocol clients link it.
        .target(name: "InputModel"),
        // `DeviceStream` and `SensorStream`, a device's and a sensor's lifetime as observables:
        // where the streams are.
        .target(name: "DeviceStreams", dependencies: ["InputModel", "Reactive"]),
        // The plumbing both kinds of device use: the input thread (`InputLoop`, its timers and
        // loop-confined runs), libudev's wrappers, file descriptors and system calls. libudev
        // is imported here only.
        .target(name: "DeviceIO", dependencies: ["Reactive", "CUdev", "CLinux"]),
        // evdev devices: reading, the uinput twin, force feedback, their udev monitor.
        .target(name: "InputDevices", dependencies: ["Reactive", "InputModel", "DeviceStreams", "DeviceIO", "CEvdev", "CLinux"]),
        // IIO sensors: sysfs and scan-element parsing, polled and buffered reading, udev
        // discovery (on DeviceIO's loop and udev wrappers; no evdev).
        .target(name: "Sensors", dependencies: ["Reactive", "InputModel", "DeviceStreams", "DeviceIO"]),
        // YAML documents as nodes: libyaml parses, YAML composes its events (no Foundation).
        .target(name: "YAML", dependencies: ["CYAML"]),
        // Bounded reading of the files evflow is told to read (configurations, recordings):
        // regular files only, a size limit, never blocking on a FIFO.
        .target(name: "FileReading"),
        // iio-sensor-proxy's D-Bus API as pure state: claims, the sensors serving it, its
        // properties (evflowd puts it on the bus with sd-bus: SensorProxyBus).
        .target(name: "SensorProxy", dependencies: ["InputModel"]),
        // The command-line option values of evflowd and evflowctl, parsed and range-checked
        // in one place (shared with the options fuzz target).
        .target(name: "OptionValues"),
        .target(name: "Recording", dependencies: ["Reactive", "InputModel", "DeviceStreams", "YAML", "FileReading"]),
        .target(name: "Pipeline", dependencies: ["Reactive", "InputModel", "DeviceStreams", "YAML", "FileReading",
                                                 .product(name: "Histogram", package: "hdrhistogram-swift")]),
        // The socket protocol's messages as types, shared by the server and evflowctl (no NIO).
        // The offline analyses of recordings (chatter, axis, wheel and sensor noise) behind
        // `evflowctl analyze` and its reports: evflowctl links them, evflowd does not.
        .target(name: "NoiseAnalysis", dependencies: ["InputModel", "Reactive", "Pipeline"]),
        .target(name: "EvflowProtocol", dependencies: ["InputModel"]),
        .target(name: "StateServer", dependencies: [
            "Reactive", "InputModel", "DeviceStreams", "Pipeline", "EvflowProtocol",
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "CoreMetrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
        ]),
        .executableTarget(name: "evflowd", dependencies: [
            "Reactive", "InputModel", "DeviceStreams", "DeviceIO", "InputDevices", "Sensors", "Recording", "Pipeline", "StateServer", "OptionValues", "SensorProxy", "CSystemd", "CSwiftRuntime", "CLinux",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            .product(name: "NIOPosix", package: "swift-nio"),
            .product(name: "NIOCore", package: "swift-nio"),
        ], exclude: ["symbol-order.txt"], linkerSettings: [
            // Release on Linux (docs/benchmarks.md "Daemon: M1"): link with lld, export no symbols
            // (SwiftPM exports every public one from an executable: 17,000 names ld.so hashes and
            // pages in) and pack the relative relocations (DT_RELR, glibc ≥ 2.36): 2 MB less RSS.
            // Then lay out the functions that run at start and on the event path together, in
            // the order scripts/symbol-order recorded: the kernel maps code 64 KiB around each
            // fault, so start-up code spread over the 14 MB .text made 9 MB of it resident;
            // 4 MB less RSS. Names the code no longer has are skipped, without a warning:
            // scripts/check-symbol-order (run by scripts/e2e) says how many are left.
            .unsafeFlags(["-use-ld=lld", "-Xlinker", "--no-export-dynamic",
                          "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs",
                          "-Xlinker", "--symbol-ordering-file=\(Context.packageDirectory)/Sources/evflowd/symbol-order.txt",
                          "-Xlinker", "--no-warn-symbol-ordering"],
                         .when(platforms: [.linux], configuration: .release)),
        ]),
        .executableTarget(name: "evflowctl", dependencies: [
            "InputModel", "Recording", "Pipeline", "NoiseAnalysis", "EvflowProtocol", "OptionValues",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        // The MQTT bridge: a client of evflowd's socket (EvflowProtocol) and of a broker
        // (libmosquitto). Topic layout, documents, outbox and discovery are pure and unit-tested.
        .target(name: "MQTTBridge", dependencies: ["Reactive", "InputModel", "EvflowProtocol", "CMosquitto"]),
        .executableTarget(name: "evflow-mqtt", dependencies: [
            "MQTTBridge", "Reactive", "EvflowProtocol",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),

        // A test tool (not installed): SensorMonitor's streams and samples as lines on stdout,
        // for scripts/check-sensors under umockdev.
        .executableTarget(name: "evflow-sensors-probe", dependencies: ["Sensors", "DeviceIO", "InputModel", "Reactive"],
                          path: "Tests/SensorsProbe"),

        // Real-kernel end-to-end suite, run inside the QEMU guest by scripts/e2e (docs/e2e.md).
        .executableTarget(name: "evflow-e2e", dependencies: ["DeviceIO", "InputDevices", "InputModel", "Reactive"],
                          path: "Tests/E2E"),

        // Fuzz targets (docs/reliability.md): the invariant checks, shared by the libFuzzer driver
        // (built with -sanitize=fuzzer,address by scripts/fuzz) and the regression-corpus test.
        .target(name: "FuzzTargets", dependencies: ["Recording", "Pipeline", "NoiseAnalysis", "EvflowProtocol", "InputModel", "DeviceStreams", "OptionValues", "Reactive"],
                path: "Fuzz/FuzzTargets"),
        .executableTarget(name: "evflow-fuzz", dependencies: ["FuzzTargets"], path: "Fuzz/evflow-fuzz"),

        .testTarget(name: "ReactiveTests", dependencies: ["Reactive", "ReactiveTesting"]),
        // CEvdev: the name tables are compared with libevdev's, name by name.
        .testTarget(name: "InputModelTests", dependencies: ["InputModel", "CEvdev"]),
        // CEvdev: the twin's frame encoding is checked as the kernel's `input_event`s.
        .testTarget(name: "InputDevicesTests", dependencies: ["DeviceIO", "InputDevices", "ReactiveTesting", "CEvdev"]),
        .testTarget(name: "SensorsTests", dependencies: ["Sensors", "DeviceStreams", "DeviceIO", "ReactiveTesting"]),
        .testTarget(name: "YAMLTests", dependencies: ["YAML"]),
        .testTarget(name: "FileReadingTests", dependencies: ["FileReading"]),
        .testTarget(name: "OptionValuesTests", dependencies: ["OptionValues"]),
        .testTarget(name: "SensorProxyTests", dependencies: ["SensorProxy", "InputModel"]),
        .testTarget(name: "RecordingTests", dependencies: ["Recording", "ReactiveTesting"]),
        .testTarget(name: "PipelineTests", dependencies: ["Pipeline", "NoiseAnalysis", "Recording", "DeviceStreams", "DeviceIO", "Sensors", "ReactiveTesting"]),
        .testTarget(name: "MQTTBridgeTests", dependencies: ["MQTTBridge", "EvflowProtocol", "InputModel", "Reactive", "ReactiveTesting"]),
        .testTarget(name: "FuzzRegressionTests", dependencies: ["FuzzTargets", "Recording", "Pipeline", "InputModel"]),
        // evflowctl's renderers (the report as text, JSON, YAML, HTML; top's screen), imported @testable.
        .testTarget(name: "EvflowdTests", dependencies: ["evflowd", "Recording", "InputModel", "DeviceIO"]),
        .testTarget(name: "EvflowctlReportTests", dependencies: ["evflowctl", "Pipeline", "NoiseAnalysis", "InputModel", "EvflowProtocol"]),
        .testTarget(name: "StateServerTests", dependencies: ["StateServer", "NoiseAnalysis", "EvflowProtocol", "Recording", "DeviceStreams", "ReactiveTesting",
                                                       .product(name: "NIOCore", package: "swift-nio")]),
    ],
    swiftLanguageModes: [.v6]
)
