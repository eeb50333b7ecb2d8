import InputModel
import Reactive

/// One device's lifetime as a value: its description, whether it could be opened, and its
/// frames — the shape of RxSwift's `GroupedObservable`, with the device as the key.
///
/// Every input source (`InputDeviceMonitor.devices`, `ReplaySource.devices`) is an
/// `Observable<DeviceStream>`, and so is what the hub passes on to watchers. A consumer
/// `flatMap`s over it: the inner subscription to `frames` is the device's scope — it ends when
/// the device goes away (the frames complete) or when the consumer disposes it, and
/// everything made for the device belongs to it. No look-up by devnode or id is needed to
/// follow a device from its source to a client.
public struct DeviceStream: Sendable {
    /// Whether the device is being read.
    public enum Access: Hashable, Sendable {
        /// Open: `frames` carries its frames.
        case open
        /// It appeared but could not be opened (e.g. permissions that never arrived); `frames`
        /// carries nothing and completes when the device goes away or becomes readable — in
        /// the latter case an `open` stream for it follows at once.
        case inaccessible(reason: String)
    }

    /// The device, as identified when the stream began.
    public let info: DeviceInfo
    /// Whether the device is being read.
    public let access: Access
    /// The device's frames; completes when the device goes away. Each source says how often
    /// and when it may be subscribed (a live device: once, from the handler that receives
    /// the stream).
    public let frames: Observable<InputFrame>
    /// What can be done with the device besides reading it (twin, grab); nil when nothing
    /// can (a replay, a hub's stream for watchers).
    public let output: (any DeviceOutputPort)?
    /// How its frames' event times relate to the scheduler's clock (`.live` but for a
    /// replay): when a noise filter's window end in event time may fire (`SampleClock`).
    public let clock: SampleClock
    /// The gestures of its keys (docs/gestures.md): a hub's stream for watchers carries the
    /// session's; a source's is empty.
    public let gestures: Observable<GestureEvent>
    /// The device's battery (docs/batteries.md). A source's: each reading as it is taken (nil:
    /// no battery found, or none any more), read off the input thread — subscribing starts the
    /// reading and disposing stops it; nil when the source reads no batteries (so a device
    /// without costs nothing). A hub's stream for watchers: the session's current reading
    /// first, then each change.
    public let batteries: Observable<DeviceBattery?>?

    /// A stream of `info` with `frames`, whose event times follow `clock`.
    public init(info: DeviceInfo, access: Access = .open, frames: Observable<InputFrame>,
                output: (any DeviceOutputPort)? = nil, clock: SampleClock = .live,
                gestures: Observable<GestureEvent> = .empty(), batteries: Observable<DeviceBattery?>? = nil) {
        self.info = info
        self.access = access
        self.frames = frames
        self.gestures = gestures
        self.batteries = batteries
        self.output = output
        self.clock = clock
    }

    /// The same stream with `batteries` as its battery readings (what `DeviceBatteries.attach`
    /// does to a source's streams).
    public func with(batteries: Observable<DeviceBattery?>?) -> DeviceStream {
        DeviceStream(info: info, access: access, frames: frames, output: output, clock: clock, gestures: gestures,
                     batteries: batteries)
    }

    /// The notice a watcher is sent when this stream begins.
    public var announcement: DeviceChange {
        switch access {
        case .open: return .added(info)
        case .inaccessible(let reason): return .inaccessible(info, reason: reason)
        }
    }
}
