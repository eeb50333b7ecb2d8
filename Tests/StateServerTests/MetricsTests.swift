import DeviceStreams
import Dispatch
import Foundation
import InputModel
import Pipeline
import Reactive
import Testing
@testable import EvflowProtocol
@testable import StateServer

/// The samples of an exposition text: `name{labels}` → value. Only what these tests need
/// (scripts/check-metrics reads the daemon's output with prometheus_client's own parser).
private func samples(_ text: String) -> [String: Double] {
    var out: [String: Double] = [:]
    for line in text.split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
        out[String(line[..<space])] = value
    }
    return out
}

private func snapshot(devices: [(DeviceInfo, Pipeline.DeviceCounters)], closed: [CloseReason: UInt64] = [:],
                      bytesSent: UInt64 = 0, source: SourceStatistics? = nil) -> MetricsSnapshot {
    MetricsSnapshot(devices: devices.map { (info: $0.0, counters: $0.1) }, clientsWatching: 1, clientsIdle: 2,
                    closed: closed, bytesSent: bytesSent, liveResources: 42, uptime: 12.5, release: "test",
                    source: source)
}

private func counters(framesIn: UInt64, keyChatter: UInt64 = 0) -> Pipeline.DeviceCounters {
    var c = Pipeline.DeviceCounters()
    c.framesIn = framesIn
    c.eventsIn = framesIn * 2
    c.framesOut = framesIn - keyChatter
    c[.keyChatter] = FilterCounts(dropped: keyChatter)
    return c
}

@Suite(.ownLiveResources) struct MetricsTests {
    let keyboard = testKeyboard("Key \"board\"\\1")

    /// The series name of one of the keyboard's counters.
    func series(_ name: String, filter: String? = nil) -> String {
        let id = keyboard.id.rawValue
        if let filter { return #"\#(name){device="\#(id)",filter="\#(filter)",name="Key \"board\"\\1"}"# }
        return #"\#(name){device="\#(id)",name="Key \"board\"\\1"}"#
    }

    @Test func aScrapeExportsTheCountersAsTheyAreAndTheNextOneWhatWasAdded() {
        let exporter = MetricsExporter()
        let first = samples(exporter.export(snapshot(devices: [(keyboard, counters(framesIn: 10, keyChatter: 3))],
                                                     closed: [.slowConsumer: 2], bytesSent: 1000)))
        #expect(first[series("evflow_device_frames_in_total")] == 10)
        #expect(first[series("evflow_device_events_in_total")] == 20)
        #expect(first[series("evflow_device_frames_out_total")] == 7)
        #expect(first[series("evflow_filter_dropped_total", filter: "key_chatter")] == 3)
        #expect(first[series("evflow_filter_dropped_total", filter: "abs_rate")] == 0)
        #expect(first[#"evflow_clients_closed_total{reason="slow-consumer"}"#] == 2)
        #expect(first[#"evflow_clients_closed_total{reason="idle"}"#] == 0)
        #expect(first["evflow_client_bytes_sent_total"] == 1000)
        #expect(first["evflow_devices"] == 1)
        #expect(first[#"evflow_clients{state="watching"}"#] == 1)
        #expect(first[#"evflow_clients{state="idle"}"#] == 2)
        #expect(first["evflow_live_resources"] == 42)
        #expect(first[#"evflow_build_info{release="test"}"#] == 1)
        #expect(first["evflow_open_retries_total"] == nil, "a replay has no source counters")

        let second = samples(exporter.export(snapshot(devices: [(keyboard, counters(framesIn: 25, keyChatter: 4))],
                                                      closed: [.slowConsumer: 2], bytesSent: 1500)))
        #expect(second[series("evflow_device_frames_in_total")] == 25)
        #expect(second[series("evflow_filter_dropped_total", filter: "key_chatter")] == 4)
        #expect(second["evflow_client_bytes_sent_total"] == 1500)
    }

    @Test func aRemovedDevicesSeriesLeaveAndARePluggedOneStartsFromItsNewCounters() {
        let exporter = MetricsExporter()
        let mouse = testMouse()
        _ = exporter.export(snapshot(devices: [(keyboard, counters(framesIn: 50)), (mouse, counters(framesIn: 5))]))
        let gone = exporter.export(snapshot(devices: [(mouse, counters(framesIn: 6))]))
        #expect(!gone.contains(keyboard.id.rawValue), "no series of a removed device")
        #expect(samples(gone)["evflow_devices"] == 1)
        // Plugged in again: new counters, lower than the exported ones; the series restarts.
        let back = samples(exporter.export(snapshot(devices: [(keyboard, counters(framesIn: 4)), (mouse, counters(framesIn: 6))])))
        #expect(back[series("evflow_device_frames_in_total")] == 4)
        // Removed and re-plugged between two scrapes: the lower value is a reset, not a decrease.
        let reset = samples(exporter.export(snapshot(devices: [(keyboard, counters(framesIn: 1)), (mouse, counters(framesIn: 7))])))
        #expect(reset[series("evflow_device_frames_in_total")] == 1)
    }

    @Test func theLiveSourcesCountersAreExportedWhenThereAreAny() {
        let exporter = MetricsExporter()
        let source = SourceStatistics(openRetries: 3, inaccessible: 1, udevOverflows: 2,
                                      removed: ["udev-remove": 7, "enodev": 1], droppedStreams: 0)
        let s = samples(exporter.export(snapshot(devices: [], source: source)))
        #expect(s["evflow_open_retries_total"] == 3)
        #expect(s["evflow_devices_inaccessible_total"] == 1)
        #expect(s["evflow_udev_overflows_total"] == 2)
        #expect(s[#"evflow_devices_removed_total{cause="udev-remove"}"#] == 7)
        #expect(s[#"evflow_devices_removed_total{cause="enodev"}"#] == 1)
        #expect(s[#"evflow_devices_removed_total{cause="read-error"}"#] == 0)
    }

    @Test func metricsOverTheSocketCountWhatTheStoreCounts() async throws {
        // METRICS takes the frame ages on the hub's scheduler: a real serial one here.
        let queue = DispatchQueue(label: "metrics-test-hub")
        let hub = DeviceHub(store: StateStore(), config: FilterConfig(),
                            scheduler: SerialDispatchQueueScheduler(serialQueue: queue), latencyClock: .monotonic)
        let source = PublishSubject<DeviceStream>()
        let running = hub.run(source.asObservable())
        let info = testKeyboard()
        let frames = PublishSubject<InputFrame>()
        queue.sync { source.onNext(DeviceStream(info: info, frames: frames.asObservable())) }
        #expect(await eventually { hub.devices.count == 1 })
        // Presses and releases 300 ms apart: each passes the key debounce at once.
        queue.sync {
            let t0 = monotonicNow() - 2_000_000_000
            for i in 0..<6 {
                let t = t0 + Int64(i) * 300_000_000
                frames.onNext(InputFrame(time: t, events: [InputEvent(time: t, type: EventType.key, code: 30, value: Int32(1 - i % 2))]))
            }
        }
        let (server, path) = try await startServer(hub: hub)
        do {
            let c = try TestClient(path: path)
            _ = try c.read()
            let reply = try c.request(#"{"class":"METRICS","id":"m"}"#)
            #expect(reply["class"] as? String == "METRICS")
            #expect(reply["format"] as? String == "prometheus-text-0.0.4")
            #expect(reply["id"] as? String == "m")
            let text = try #require(reply["text"] as? String)
            let s = samples(text)
            let stored = try #require(hub.store.state(of: info.id)).counters
            #expect(stored.framesIn == 6)
            #expect(s[#"evflow_device_frames_in_total{device="\#(info.id.rawValue)",name="Test Keyboard"}"#] == 6)
            #expect(s[#"evflow_clients{state="idle"}"#] == 1)
            #expect(text.contains("# TYPE evflow_device_frames_in_total counter"))
            // The greeting and the first reply were sent before this scrape.
            #expect((s["evflow_client_bytes_sent_total"] ?? 0) > 0)
            #expect(s[#"evflow_latency_frames_total{clock="monotonic",stage="read"}"#] == 6)
            let p50 = try #require(s[#"evflow_latency_seconds{clock="monotonic",quantile="0.5",stage="read"}"#])
            #expect(p50 > 0.5 && p50 < 3, "frames stamped 0.5–2 s before they were read (got \(p50) s)")

            let bad = try c.request(#"{"class":"METRICS","format":"json"}"#)
            #expect(bad["class"] as? String == "ERROR")
            #expect(bad["field"] as? String == "format")
            #expect(try c.request(#"{"class":"PING"}"#)["class"] as? String == "PING", "the connection lives on")
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        running.dispose()
        queue.sync {}
    }

    @Test func theMetricsReplyDecodesToItsType() throws {
        var w = MessageWriter(names: .standard)
        w.appendMetrics("# TYPE a counter\na 1\n", tag: .integer(4))
        let line = w.bytes.dropLast()
        let message = try ServerMessage.decode(line)
        #expect(message == .metrics(text: "# TYPE a counter\na 1\n", format: MetricsFormat.prometheusText, tag: .integer(4)))
        #expect(try Request.parse(Array(Request(.metrics, tag: .string("x")).encoded().dropLast())[...])
                == Request(.metrics, tag: .string("x")))
    }
}

/// `LATENCY` over the socket, with the hub on a real serial scheduler (the answer is taken
/// there, as on evflowd's input thread).
@Suite(.ownLiveResources) struct LatencyOverTheSocketTests {
    @Test func latencyIsAnsweredInRequestOrderWithTheHubsAges() async throws {
        let queue = DispatchQueue(label: "latency-test-hub")
        let scheduler = SerialDispatchQueueScheduler(serialQueue: queue)
        let hub = DeviceHub(store: StateStore(), config: FilterConfig(), scheduler: scheduler, latencyClock: .monotonic)
        let devices = PublishSubject<DeviceStream>()
        let running = hub.run(devices.asObservable())
        let info = testKeyboard()
        let frames = PublishSubject<InputFrame>()
        queue.sync { devices.onNext(DeviceStream(info: info, frames: frames.asObservable())) }
        #expect(await eventually { hub.devices.count == 1 })
        // A frame stamped 2 ms before it reaches the hub.
        queue.sync {
            let t = monotonicNow() - 2_000_000
            frames.onNext(InputFrame(time: t, events: [InputEvent(time: t, type: EventType.key, code: 30, value: 1)]))
        }
        let (server, path) = try await startServer(hub: hub)
        do {
            let c = try TestClient(path: path)
            _ = try c.read()
            // Pipelined: LATENCY is answered from the hub's thread, PING at once; the
            // replies still come in request order.
            try c.send(#"{"class":"LATENCY","id":1}"# + "\n" + #"{"class":"PING","id":2}"#)
            let latencyLine = try #require(try c.readLine())
            let latency = try #require(try JSONSerialization.jsonObject(with: Data(latencyLine.utf8)) as? [String: Any])
            let ping = try c.read()
            #expect(latency["class"] as? String == "LATENCY")
            #expect(latency["id"] as? Int == 1)
            #expect(ping["class"] as? String == "PING")
            #expect(latency["clock"] as? String == "monotonic")
            let perDevice = try #require((latency["devices"] as? [String: Any])?[info.id.rawValue] as? [String: Any])
            let read = try #require(perDevice["read"] as? [String: Any])
            #expect(read["count"] as? Int == 1)
            let age = try #require(read["max"] as? Int)
            #expect(age >= 1_980_000 && age < 1_000_000_000, "about 2 ms old when read (got \(age) ns)")
            let total = try #require(latency["total"] as? [String: Any])
            #expect((total["sent"] as? [String: Any])?["count"] is Int, "sent is measured on a real clock")
            let typed = try ServerMessage.decode(latencyLine)
            guard case .latency(let report, .integer(1)) = typed else {
                Issue.record("LATENCY decodes as \(typed)")
                return
            }
            #expect(report.devices[info.id]?[.read]?.count == 1)
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        running.dispose()
        queue.sync {}
    }
}
