import DeviceStreams
import EvflowProtocol
import InputModel
import Pipeline
import Reactive

/// One message of a watcher's stream, before encoding.
enum WatchItem: Sendable {
    /// A frame of a device (only the selected events).
    case frame(DeviceID, InputFrame)
    /// A device appeared, went away, or could not be opened.
    case notice(DeviceChange)
    /// A sample of a sensor the watch selects (`sensors`, 1.4), of the watch's stream.
    case sample(SensorInfo, StreamKind, SensorSample, orientation: String?)
    /// A selected sensor came (after the watch started) or went.
    case sensorNotice(SensorChange)
    /// A gesture of a key of a device (the `gestures` stream, 1.5).
    case gesture(DeviceID, GestureEvent)
    /// A device's battery changed (1.8).
    case battery(DeviceID, DeviceBattery)
}

/// Builds a client's `WATCH` stream from the hub's device streams with the core's operators.
///
/// ```
/// hub.streams(raw:)                     // .present(devices open now), then .added(each new one)
///   → flatMap { present: the listed devices gone meanwhile → DEVICE removed
///                        each device → device(announce: not listed in the response)
///               added:   device(announce: true) }
///   device(s) = frames.compactMap(select) → FRAME ...     // completes on removal
///               then DEVICE removed; DEVICE added first when announced
///   → filter(RateLimiter.admit)                           // per-client max_rate
/// ```
/// A device's lifetime in the stream is its inner subscription: no table of devices is kept.
/// Every subscription the stream makes belongs to the one disposable `subscribe` returns, so
/// disposing it (unwatch, disconnect, slow-consumer drop) releases everything, and a device's
/// removal completes its inner, which releases that part at once.
enum WatchStream {
    /// The stream for `watch`, with `onRateDrop` called for every message `max_rate` drops.
    /// `listed`: the devices the `WATCH` response named (open when it was written); they are
    /// not announced again, and those gone by the time the stream starts get their
    /// `removed` notice first.
    static func make(hub: DeviceHub, watch: WatchRequest, listed: [DeviceInfo],
                     onRateDrop: @escaping @Sendable () -> Void) -> Observable<WatchItem> {
        let raw = watch.stream == .raw
        let selection = watch.events
        let listedIDs = Set(listed.map(\.id))
        func device(_ stream: DeviceStream, announce: Bool) -> Observable<WatchItem> {
            let info = stream.info
            guard case .open = stream.access else {
                // Inaccessible: announced, then `removed` when its (frameless) stream ends.
                return Observable.just(WatchItem.notice(stream.announcement))
                    .concat(stream.frames.compactMap { _ -> WatchItem? in nil })
                    .concat(.just(.notice(.removed(info))))
            }
            // The gestures stream: the session's gestures of the selected keys instead of frames
            // (it ends when the device goes, as its frames do).
            let items = watch.stream == .gestures
                ? stream.gestures.filter { selection.matches(type: EventType.key, code: $0.code) }.map { WatchItem.gesture(info.id, $0) }
                : stream.frames.compactMap { select(selection, in: $0) }.map { WatchItem.frame(info.id, $0) }
            // Its battery's changes after the reading `info` carries (the one announced, or the
            // one when the watch started): the session's subject starts with the reading now,
            // which is dropped when it is that one, so no change is lost or sent twice.
            let batteries = Observable<WatchItem>.deferred {
                let last = LastBattery(info.battery)
                return (stream.batteries ?? .empty()).compactMap { reading -> WatchItem? in
                    guard let reading, last.take(reading) else { return nil }
                    return .battery(info.id, reading)
                }
            }
            // Both end when the device goes (the session completes its subject with its frames).
            let frames = Observable.merge([items, batteries]).concat(.just(.notice(.removed(info))))
            return announce ? frames.startWith(.notice(.added(info))) : frames
        }
        var items = hub.streams(raw: raw).flatMap { update -> Observable<WatchItem> in
            switch update {
            case .present(let streams):
                let selected = streams.filter { watch.selects($0.info) }
                let present = Set(selected.map(\.info.id))
                let gone = listed.filter { !present.contains($0.id) }.map { Observable.just(WatchItem.notice(.removed($0))) }
                return Observable.merge(gone + selected.map { device($0, announce: !listedIDs.contains($0.info.id)) })
            case .added(let stream):
                return watch.selects(stream.info) ? device(stream, announce: true) : .empty()
            }
        }
        if !watch.sensors.isEmpty {
            items = Observable.merge([items, samples(hub: hub.sensors, watch: watch)])
        }
        if let rate = watch.maxRate {
            let limiter = RateLimiterBox(rate: rate)
            items = items.filter { item in
                let admitted: Bool
                switch item {
                case .notice, .sensorNotice, .gesture, .battery: return true   // never limited (a gesture is a key's)
                case .frame(_, let frame): admitted = limiter.admit(frame)
                case .sample(_, _, let sample, _): admitted = limiter.admit(time: sample.time)
                }
                if admitted { return true }
                onRateDrop()
                return false
            }
        }
        return items
    }

    /// The `SAMPLE`s of the sensors `watch` selects, present and later ones, each later one
    /// announced (`SENSOR` added) and each one's end noticed (`SENSOR` removed): subscribing a
    /// sensor's updates here is what makes it read, and disposing the watch stops it.
    static func samples(hub: SensorHub, watch: WatchRequest) -> Observable<WatchItem> {
        let raw = watch.stream == .raw
        func sensor(_ feed: SensorFeed, announce: Bool) -> Observable<WatchItem> {
            guard watch.selects(feed.info) else { return .empty() }
            let info = feed.info
            let samples = feed.updates.compactMap { update -> WatchItem? in
                switch update {
                case .raw(let s): raw ? .sample(info, .raw, s, orientation: nil) : nil
                case .filtered(let s, let o): raw ? nil : .sample(info, .filtered, s, orientation: o)
                }
            }
            .concat(.just(.sensorNotice(.removed(info))))
            return announce ? samples.startWith(.sensorNotice(.added(info))) : samples
        }
        return hub.feeds().flatMap { update -> Observable<WatchItem> in
            switch update {
            case .present(let feeds): Observable.merge(feeds.map { sensor($0, announce: false) })
            case .added(let feed): sensor(feed, announce: true)
            }
        }
    }

    /// The frame with only the selected events (never `SYN_REPORT`), nil when none is left.
    static func select(_ selection: EventSelection, in frame: InputFrame) -> InputFrame? {
        if selection.isAll {
            return frame.events.isEmpty ? nil : frame
        }
        var out = frame
        out.events.removeAll { !selection.matches(type: $0.type, code: $0.code) || $0.isSynReport }
        return out.events.isEmpty ? nil : out
    }
}

/// `max_rate` (docs/protocol.md §4 WATCH): a token bucket of `rate` tokens per second with a
/// burst of one second's worth, on the frames' own times (so replay in virtual time is exact).
///
/// Not `throttle`: throttle(latest:) would hold a frame back and replace it by a later one,
/// but the protocol promises that frames with `EV_KEY`/`EV_SW` events are never dropped or
/// delayed. Those use a token when there is one and pass anyway when there is none.
struct RateLimiter: Sendable {
    let rate: Double
    let capacity: Double
    private var tokens: Double
    private var last: Int64?

    init(rate: Double) {
        self.rate = rate
        capacity = max(rate, 1)
        tokens = capacity
    }

    /// Whether a frame at `time` may be sent; `essential` frames always may.
    mutating func admit(time: Int64, essential: Bool) -> Bool {
        if let last, time > last {
            tokens = min(capacity, tokens + Double(time - last) * rate / 1e9)
        }
        if last == nil || time > last! { last = time }
        if tokens >= 1 {
            tokens -= 1
            return true
        }
        return essential
    }
}

/// The limiter of one subscription (the filter runs serially after the merge).
final class RateLimiterBox: @unchecked Sendable {
    private var limiter: RateLimiter

    init(rate: Double) { limiter = RateLimiter(rate: rate) }

    /// Whether a sensor sample at `time` may be sent (samples are never essential).
    func admit(time: Int64) -> Bool { limiter.admit(time: time, essential: false) }

    func admit(_ frame: InputFrame) -> Bool {
        let essential = frame.events.contains { $0.type == EventType.key || $0.type == EventType.sw }
        return limiter.admit(time: frame.time, essential: essential)
    }
}

/// The battery reading a watcher last had for one device; a reading is passed on only when it
/// differs (`DeviceBattery.readingDiffers`: percent, level or status, or another supply).
/// Called serially by one watcher's subscription.
final class LastBattery: @unchecked Sendable {
    private var last: DeviceBattery?

    init(_ last: DeviceBattery?) { self.last = last }

    /// Whether `reading` is news to the watcher; it becomes the last one if so.
    func take(_ reading: DeviceBattery) -> Bool {
        if let last, !last.readingDiffers(from: reading), last.supply == reading.supply { return false }
        last = reading
        return true
    }
}
