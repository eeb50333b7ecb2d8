import CoreMetrics
import EvflowProtocol
import InputModel
import Pipeline
import Prometheus
import Reactive

/// Counters of the input source that only the live source has (udev + evdev), for `METRICS`.
/// A replay has none of these; its metrics leave them out.
public struct SourceStatistics: Sendable, Hashable {
    /// Open retries after EACCES/EPERM.
    public var openRetries: Int
    /// Devices announced as inaccessible.
    public var inaccessible: Int
    /// Times the udev socket overflowed (`ENOBUFS`) and the devices were re-enumerated.
    public var udevOverflows: Int
    /// Devices removed, per cause: `udev-remove`, `enodev`, `read-error`.
    public var removed: [String: Int]
    /// Device streams nobody subscribed (closed at once).
    public var droppedStreams: Int

    /// Creates statistics.
    public init(openRetries: Int = 0, inaccessible: Int = 0, udevOverflows: Int = 0, removed: [String: Int] = [:],
                droppedStreams: Int = 0) {
        self.openRetries = openRetries
        self.inaccessible = inaccessible
        self.udevOverflows = udevOverflows
        self.removed = removed
        self.droppedStreams = droppedStreams
    }
}

/// What one scrape reads: every counter and gauge `METRICS` exports, taken at one moment.
struct MetricsSnapshot: Sendable {
    /// The present devices and their counters (the store's snapshots).
    var devices: [(info: DeviceInfo, counters: Pipeline.DeviceCounters)]
    var clientsWatching: Int
    var clientsIdle: Int
    /// Clients closed since start, per reason.
    var closed: [CloseReason: UInt64]
    /// Bytes the kernel took from every client's socket since start.
    var bytesSent: UInt64
    var liveResources: Int
    var uptime: Double
    var release: String
    /// The live source's counters; nil in replay.
    var source: SourceStatistics?
    /// Frame ages per stage (`LATENCY`'s totals), when taken.
    var latency: LatencyReport? = nil
    /// The present sensors: their counts and last values.
    var sensors: [SensorState] = []
}

/// evflowd's metrics, through swift-metrics with the swift-prometheus backend: `export`
/// brings swift-metrics' counters and gauges up to a snapshot and returns the registry's
/// exposition in Prometheus' text format (docs/service.md, "Metrics").
///
/// Nothing is counted twice on the hot path: the pipeline already keeps its counters (the
/// store's `DeviceCounters`, the server's atomics), so a scrape reads them and increments
/// each swift-metrics `Counter` by what was added since the previous scrape. A device's
/// series exist while it is present: when it goes, its counters are destroyed (they leave
/// the exposition); when it comes back, they start again from its new counters, which
/// Prometheus' `rate()` reads as a counter reset. Scrapes are serialised by a mutex (a
/// scrape is a request, never a frame).
final class MetricsExporter: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let state = PosixLocked(State())

    /// One exported counter: its swift-metrics handle and the value it has been brought to.
    private struct Exported {
        let counter: CoreMetrics.Counter
        var value: UInt64
    }

    private struct State {
        /// Per device, its counters by series key (name + labels).
        var deviceCounters: [DeviceID: [String: Exported]] = [:]
        /// Counters that are not a device's.
        var counters: [String: Exported] = [:]
        var gauges: [String: CoreMetrics.Gauge] = [:]
        /// Per sensor, its counters and its gauges by series key (they leave with it).
        var sensorCounters: [DeviceID: [String: Exported]] = [:]
        var sensorGauges: [DeviceID: [String: CoreMetrics.Gauge]] = [:]
    }

    init() {
        factory = PrometheusMetricsFactory(registry: registry)
    }

    /// Brings the metrics to `snapshot` and returns the exposition text.
    func export(_ snapshot: MetricsSnapshot) -> String {
        state.withLock { s in
            update(&s, snapshot)
            return registry.emitToString()
        }
    }

    // MARK: - Update

    private func update(_ s: inout State, _ m: MetricsSnapshot) {
        gauge(&s, "evflow_build_info", ["release": m.release]).record(1)
        gauge(&s, "evflow_uptime_seconds").record(m.uptime)
        gauge(&s, "evflow_devices").record(m.devices.count)
        gauge(&s, "evflow_clients", ["state": "watching"]).record(m.clientsWatching)
        gauge(&s, "evflow_clients", ["state": "idle"]).record(m.clientsIdle)
        gauge(&s, "evflow_live_resources").record(m.liveResources)
        for reason in CloseReason.allCases {
            count(&s.counters, "evflow_clients_closed_total", ["reason": reason.rawValue], m.closed[reason] ?? 0)
        }
        count(&s.counters, "evflow_client_bytes_sent_total", [:], m.bytesSent)
        if let source = m.source {
            count(&s.counters, "evflow_open_retries_total", [:], UInt64(source.openRetries))
            count(&s.counters, "evflow_devices_inaccessible_total", [:], UInt64(source.inaccessible))
            count(&s.counters, "evflow_udev_overflows_total", [:], UInt64(source.udevOverflows))
            count(&s.counters, "evflow_device_streams_dropped_total", [:], UInt64(source.droppedStreams))
            for cause in ["udev-remove", "enodev", "read-error"] {
                count(&s.counters, "evflow_devices_removed_total", ["cause": cause], UInt64(source.removed[cause] ?? 0))
            }
        }

        if let latency = m.latency {
            for (stage, summary) in latency.total {
                let labels = ["stage": stage.rawValue, "clock": latency.clock.rawValue]
                count(&s.counters, "evflow_latency_frames_total", labels, summary.count)
                for (q, v) in [("0.5", summary.p50), ("0.9", summary.p90), ("0.99", summary.p99),
                               ("0.999", summary.p999), ("1", summary.max)] {
                    var l = labels
                    l["quantile"] = q
                    gauge(&s, "evflow_latency_seconds", l).record(Double(v) / 1e9)
                }
            }
        }

        var present = Set<DeviceID>()
        for (info, c) in m.devices {
            present.insert(info.id)
            var counters = s.deviceCounters[info.id] ?? [:]
            // The id and name as evflowctl prints them: their control characters (ESC, NUL…) written out,
            // which the text format has no escape for (it escapes only `\\`, `"` and newline, and so does
            // the library). A replayed session's ids are the file's: a stranger's text like the names.
            let labels = ["device": VisibleText.escaped(info.id.rawValue), "name": VisibleText.escaped(info.name)]
            count(&counters, "evflow_device_frames_in_total", labels, c.framesIn)
            count(&counters, "evflow_device_events_in_total", labels, c.eventsIn)
            count(&counters, "evflow_device_frames_out_total", labels, c.framesOut)
            count(&counters, "evflow_device_events_out_total", labels, c.eventsOut)
            count(&counters, "evflow_device_frames_dropped_total", labels, c.framesDropped)
            count(&counters, "evflow_device_syn_dropped_total", labels, c.synDropped)
            count(&counters, "evflow_device_msc_dropped_total", labels, c.mscDropped)
            for kind in FilterKind.allCases {
                let f = c[kind]
                var l = labels
                l["filter"] = kind.rawValue
                count(&counters, "evflow_filter_dropped_total", l, f.dropped)
                count(&counters, "evflow_filter_delayed_total", l, f.delayed)
                count(&counters, "evflow_filter_merged_total", l, f.merged)
            }
            s.deviceCounters[info.id] = counters
        }
        for (id, counters) in s.deviceCounters where !present.contains(id) {
            for exported in counters.values { exported.counter.destroy() }
            s.deviceCounters[id] = nil
        }
        updateSensors(&s, m.sensors)
    }

    /// Per sensor: samples read and filtered and failed reads (counters), whether it is read
    /// now and whether it is failed, and per
    /// channel its last filtered and raw values in the channel's unit (gauges, from the first
    /// sample on). A sensor's series leave the exposition when it goes.
    private func updateSensors(_ s: inout State, _ sensors: [SensorState]) {
        var present = Set<DeviceID>()
        for sensor in sensors {
            let info = sensor.info
            present.insert(info.id)
            let labels = ["sensor": VisibleText.escaped(info.id.rawValue), "name": VisibleText.escaped(info.name)]
            var counters = s.sensorCounters[info.id] ?? [:]
            count(&counters, "evflow_sensor_samples_in_total", labels, sensor.samplesIn)
            count(&counters, "evflow_sensor_samples_out_total", labels, sensor.samplesOut)
            count(&counters, "evflow_sensor_read_errors_total", labels, sensor.readErrors)
            s.sensorCounters[info.id] = counters
            var gauges = s.sensorGauges[info.id] ?? [:]
            func gauge(_ name: String, _ labels: [String: String]) -> CoreMetrics.Gauge {
                let key = Self.key(name, labels)
                if let g = gauges[key] { return g }
                let g = CoreMetrics.Gauge(label: name, dimensions: Self.dimensions(labels), factory: factory)
                gauges[key] = g
                return g
            }
            gauge("evflow_sensor_read", labels).record(sensor.live ? 1 : 0)
            gauge("evflow_sensor_failed", labels).record(sensor.failed ? 1 : 0)
            for (i, channel) in info.channels.enumerated() {
                var l = labels
                l["channel"] = channel.name
                l["quantity"] = channel.quantity.rawValue
                l["unit"] = channel.unit
                if let f = sensor.filtered, i < f.values.count, f.values[i].isFinite { gauge("evflow_sensor_value", l).record(f.values[i]) }
                if let r = sensor.raw, i < r.values.count, r.values[i].isFinite { gauge("evflow_sensor_raw_value", l).record(r.values[i]) }
            }
            s.sensorGauges[info.id] = gauges
        }
        for (id, counters) in s.sensorCounters where !present.contains(id) {
            for exported in counters.values { exported.counter.destroy() }
            s.sensorCounters[id] = nil
            for g in s.sensorGauges[id]?.values ?? [:].values { g.destroy() }
            s.sensorGauges[id] = nil
        }
    }

    /// Brings the counter `name{labels}` in `table` to `value`: increments it by the difference;
    /// a value below the exported one (the series' source restarted) replaces the series.
    private func count(_ table: inout [String: Exported], _ name: String, _ labels: [String: String], _ value: UInt64) {
        let key = Self.key(name, labels)
        if var e = table[key] {
            if value >= e.value {
                if value > e.value { e.counter.increment(by: Int64(clamping: value - e.value)) }
                e.value = value
                table[key] = e
                return
            }
            e.counter.destroy()
        }
        let counter = CoreMetrics.Counter(label: name, dimensions: Self.dimensions(labels), factory: factory)
        if value > 0 { counter.increment(by: Int64(clamping: value)) }
        table[key] = Exported(counter: counter, value: value)
    }

    private func gauge(_ s: inout State, _ name: String, _ labels: [String: String] = [:]) -> CoreMetrics.Gauge {
        let key = Self.key(name, labels)
        if let g = s.gauges[key] { return g }
        let g = CoreMetrics.Gauge(label: name, dimensions: Self.dimensions(labels), factory: factory)
        s.gauges[key] = g
        return g
    }

    private static func dimensions(_ labels: [String: String]) -> [(String, String)] {
        labels.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    private static func key(_ name: String, _ labels: [String: String]) -> String {
        var k = name
        for (n, v) in dimensions(labels) { k += "\u{0}\(n)=\(v)" }
        return k
    }
}
