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
}

/// Builds a client's `WATCH` stream from the hub's observables with the core's operators.
///
/// ```
/// merge(hub.deviceChanges, deferred(devices present now))      // changes subscribed first
///   → compactMap(DeviceTracker.admit)                          // selection, de-duplication
///   → flatMap { start: hub.frames(of:raw:).compactMap(select)  // completes on removal
///               notice: just(DEVICE ...) }
///   → filter(RateLimiter.admit)                                // per-client max_rate
/// ```
/// Every subscription the stream makes belongs to the one disposable `subscribe` returns, so
/// disposing it (unwatch, disconnect, slow-consumer drop) releases everything, and a device's
/// removal completes its `frames` inner, which releases that part at once.
enum WatchStream {
    /// What the tracker decided for one device change.
    enum Step {
        /// Start streaming a device; `announce` sends an `added` notice first (devices that
        /// were already present are listed in the `WATCH` response instead).
        case start(DeviceInfo, announce: Bool)
        /// Forward a notice.
        case notice(DeviceChange)
    }

    /// The stream for `watch`, with `onRateDrop` called for every message `max_rate` drops.
    static func make(hub: DeviceHub, watch: WatchRequest,
                     onRateDrop: @escaping @Sendable () -> Void) -> Observable<WatchItem> {
        let raw = watch.stream == .raw
        let selection = watch.events
        return Observable<WatchItem>.deferred {
            let tracker = DeviceTracker(watch: watch)
            let present = Observable<DeviceChange>.deferred { Observable.from(hub.devices.map { .added($0) }) }
            let changes = Observable.merge(
                hub.deviceChanges.map { (change: $0, present: false) },
                present.map { (change: $0, present: true) })
            var items = changes
                .compactMap { tracker.admit($0.change, present: $0.present) }
                .flatMap { step -> Observable<WatchItem> in
                    switch step {
                    case .notice(let change):
                        return .just(.notice(change))
                    case .start(let info, let announce):
                        let id = info.id
                        let frames = (hub.frames(of: id, raw: raw) ?? .empty())
                            .compactMap { Self.select(selection, in: $0) }
                            .map { WatchItem.frame(id, $0) }
                        return announce ? frames.startWith(.notice(.added(info))) : frames
                    }
                }
            if let rate = watch.maxRate {
                let limiter = RateLimiterBox(rate: rate)
                items = items.filter { item in
                    guard case .frame(_, let frame) = item else { return true }   // notices: never limited
                    if limiter.admit(frame) { return true }
                    onRateDrop()
                    return false
                }
            }
            return items
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

/// Which devices a watch streams right now: de-duplicates a device seen both in the snapshot
/// and as a live `added`, and forwards `removed` only for devices it streamed. Touched only
/// from inside the merge (serial), so it needs no lock.
final class DeviceTracker: @unchecked Sendable {
    private let watch: WatchRequest
    private var active: Set<DeviceID> = []

    init(watch: WatchRequest) { self.watch = watch }

    func admit(_ change: DeviceChange, present: Bool) -> WatchStream.Step? {
        guard watch.selects(change.device) else { return nil }
        switch change {
        case .added(let info):
            guard active.insert(info.id).inserted else { return nil }
            return .start(info, announce: !present)
        case .removed(let info):
            guard active.remove(info.id) != nil else { return nil }
            return .notice(change)
        case .inaccessible:
            return .notice(change)
        }
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

    func admit(_ frame: InputFrame) -> Bool {
        let essential = frame.events.contains { $0.type == EventType.key || $0.type == EventType.sw }
        return limiter.admit(time: frame.time, essential: essential)
    }
}
