import EvflowProtocol
import InputModel
import Logging
import NIOCore
import Pipeline
import Reactive

/// Request dispatch: each request class answered from the server's state, the asynchronous
/// `LATENCY`/`METRICS`, and the client's watch. Event loop only.
extension ClientConnection {
    func handle(_ request: Request) {
        let tag = request.tag
        switch request.kind {
        case .devices:
            let devices = core.hub.devices.map(core.withOutput)
            let sensors = core.hub.sensors.sensors
            respond { $0.appendDevices(devices, sensors: sensors, tag: tag) }
        case .state(let device):
            switch core.stateReport(for: device) {
            case .success(let report):
                let shown = loop.value.keys == .visible ? report : KeyPrivacy.redacted(report)
                respond { $0.appendState(shown, tag: tag) }
            case .failure(let error):
                // Not an input device: a sensor (1.4) by id or name, else the device's error.
                sensorState(device, notFound: ProtocolError(error.kind, requestClass: "STATE", tag: tag), tag: tag)
            }
        case .stats:
            let stats = loop.value.keys == .visible ? core.stats() : KeyPrivacy.redacted(core.stats())
            respond { $0.appendStats(stats, tag: tag) }
        case .ping:
            let now = monotonicNow()
            respond { $0.appendPing(now: now, tag: tag) }
        case .metrics:
            withLatency { [core] report in
                let text = core.metricsText(latency: report)
                return { $0.appendMetrics(text, tag: tag) }
            }
        case .latency:
            withLatency { report in { $0.appendLatency(report, tag: tag) } }
        case .unwatch:
            endWatch()
            respond { $0.appendUnwatch(tag: tag) }
        case .watch(let watchRequest):
            startWatch(watchRequest, tag: tag)
        case .accessibility(let accessRequest):
            accessibility(accessRequest, tag: tag)
        }
    }

    /// Answers from the hub's frame ages, which live on its scheduler: asks there, then builds
    /// the response on the event loop (adding `sent`, kept here). Until then later request lines
    /// wait in the framer, so responses stay in request order.
    private func withLatency(_ response: @escaping @Sendable (LatencyReport) -> (inout MessageWriter) -> Void) {
        loop.value.answering = true
        let eventLoop = channel.eventLoop
        core.latencyReport { [weak self] report in
            eventLoop.execute {
                guard let self else { return }
                self.loop.value.answering = false
                guard !self.loop.value.closed else { return }
                var report = report
                report.total[.sent] = self.core.sentSummary
                self.respond(response(report))
                self.processLines()
            }
        }
    }

    /// A sensor's `STATE`: one nobody reads is read once first (`SensorHub.stateReadingOnce`),
    /// so the answer comes from the hub's scheduler; like `withLatency`, later request lines
    /// wait meanwhile, so responses stay in request order.
    private func sensorState(_ sensor: String, notFound: ProtocolError, tag: RequestTag?) {
        loop.value.answering = true
        let eventLoop = channel.eventLoop
        core.hub.sensors.stateReadingOnce(of: sensor) { [weak self] lookup in
            eventLoop.execute {
                guard let self else { return }
                self.loop.value.answering = false
                guard !self.loop.value.closed else { return }
                switch lookup {
                case .found(let state):
                    let report = SensorStateReport(sensor: state.info, filtered: state.filtered, raw: state.raw,
                                                   orientation: state.orientation, live: state.live,
                                                   readErrors: state.readErrors, failed: state.failed)
                    self.respond { $0.appendSensorState(report, tag: tag) }
                case .ambiguous:
                    self.respond { $0.appendError(ProtocolError(.ambiguousDevice(sensor), requestClass: "STATE", tag: tag)) }
                case .none:
                    self.respond { $0.appendError(notFound) }
                }
                self.processLines()
            }
        }
    }

    private func startWatch(_ sent: WatchRequest, tag: RequestTag?) {
        let keys = loop.value.keys
        // Refused like a bad request: the old watch, if any, stays in force.
        if let refusal = KeyAccess.refusal(of: sent, keys: keys, tag: tag) {
            respond { $0.appendError(refusal) }
            return
        }
        // Each id or name read against the devices there are, open or inaccessible (so `X#2`
        // and a session's own ids select their device); one that selects nothing is refused.
        let request: WatchRequest
        do {
            request = try sent.resolved(among: core.hub.devices + core.hub.inaccessible.map(\.info))
        } catch {
            var error = error
            error.tag = tag
            respond { [error] in $0.appendError(error) }
            return
        }
        endWatch()
        let generation = outbox.generation
        let listed = core.hub.devices.filter(request.selects)
        let matched = listed.map(\.id) + core.hub.sensors.sensors.filter(request.selects).map(\.id)
        meta.withLock {
            $0.tag = tag
            $0.stream = request.stream
        }
        // The response is queued first and flushed after subscribing: the client sees it
        // before any stream message, and everything that happens after it is streamed.
        respond(flush: false) { $0.appendWatch(request, matched: matched, tag: tag) }
        defer { flush() }
        let frames = core.frameEncoders.encoder(for: WatchShape(stream: request.stream, selection: request.events, keys: keys))
        let encoder = WatchEncoder(client: self, names: core.names, frames: frames, generation: generation)
        let stream = WatchStream.make(hub: core.hub, watch: request, listed: listed, onRateDrop: { [weak self] in
            self?.rateDropped.add(1, ordering: .relaxed)
        })
        loop.value.watch = stream.subscribe(
            onNext: { encoder.encode($0) },
            onError: { [weak self] error in
                self?.core.logger.warning("watch stream failed", metadata: ["client": "\(self?.number ?? 0)", "error": "\(error)"])
            })
        core.watchersChanged()
    }

    /// Ends the current watch: nothing of it is sent after this returns.
    func endWatch() {
        outbox.newGeneration()
        if let watch = loop.value.watch {
            loop.value.watch = nil
            watch.dispose()
            meta.withLock {
                $0.tag = nil
                $0.stream = nil
            }
            core.watchersChanged()
        }
    }

    var isWatching: Bool { meta.withLock { $0.stream != nil } }
}

/// Encodes a watch's items; called serially by the watch subscription (a pipeline thread).
/// Frames are encoded by the shape's shared encoder (once for every client of the shape),
/// device notices here.
final class WatchEncoder: @unchecked Sendable {
    private weak var client: ClientConnection?
    private var writer: MessageWriter
    private let frames: SharedFrameEncoder
    private let generation: UInt64

    init(client: ClientConnection, names: EventNameCache, frames: SharedFrameEncoder, generation: UInt64) {
        self.client = client
        writer = MessageWriter(names: names, capacity: 256)
        self.frames = frames
        self.generation = generation
    }

    func encode(_ item: WatchItem) {
        guard let client else { return }
        let queued: Bool
        switch item {
        case .frame(let id, let frame):
            guard let bytes = frames.encode(device: id, frame: frame) else { return }
            queued = client.enqueue(bytes, generation: generation, frameTime: frame.time)
        case .notice(let change):
            writer.reset()
            writer.appendDeviceNotice(change)
            queued = client.enqueue(writer.bytes, generation: generation)
        case .sensorNotice(let change):
            writer.reset()
            writer.appendSensorNotice(change)
            queued = client.enqueue(writer.bytes, generation: generation)
        case .gesture(let id, let gesture):
            writer.reset()
            writer.appendGesture(device: id, gesture, keys: frames.shape.keys)
            queued = client.enqueue(writer.bytes, generation: generation, frameTime: gesture.time)
        case .battery(let id, let battery):
            writer.reset()
            writer.appendBattery(device: id, battery)
            queued = client.enqueue(writer.bytes, generation: generation)
        case .sample(let sensor, let stream, let sample, let orientation):
            writer.reset()
            writer.appendSample(sensor, stream: stream, sample: sample, orientation: orientation)
            queued = client.enqueue(writer.bytes, generation: generation, frameTime: sample.time)
        }
        if queued { client.sent.add(1, ordering: .relaxed) }
    }
}
