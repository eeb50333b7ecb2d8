import InputModel

/// Why the server closes a connection (`CLOSE`'s `reason`).
public enum CloseReason: String, Hashable, Sendable, CaseIterable {
    /// The client's outgoing buffer overflowed.
    case slowConsumer = "slow-consumer"
    /// No request within the idle timeout after connecting, or, while not watching, after the last request.
    case idle
    /// The client limit was reached.
    case tooManyClients = "too-many-clients"
    /// The peer's credentials are not allowed.
    case notPermitted = "not-permitted"
    /// evflowd is stopping.
    case shutdown
}

/// Counters of one device, for `STATE`.
public struct DeviceCounters: Hashable, Sendable {
    /// Frames read from the device.
    public var framesIn: UInt64
    /// Events read from the device (without `SYN_REPORT`s).
    public var eventsIn: UInt64
    /// Frames delivered by the pipeline.
    public var framesOut: UInt64
    /// Events delivered by the pipeline.
    public var eventsOut: UInt64
    /// `SYN_DROPPED` resyncs.
    public var synDropped: UInt64
    /// `EV_MSC` events dropped with their frame (the filters removed the rest of it).
    public var mscDropped: UInt64
    /// Events removed, per filter name.
    public var droppedByFilter: [String: UInt64]
    /// `key_chatter`'s drops per key code (1.6; the first 16 keys that chattered), for a
    /// switch that wears out.
    public var chatterByKey: [UInt16: UInt64]

    /// Creates counters.
    public init(framesIn: UInt64 = 0, eventsIn: UInt64 = 0, framesOut: UInt64 = 0, eventsOut: UInt64 = 0,
                synDropped: UInt64 = 0, mscDropped: UInt64 = 0, droppedByFilter: [String: UInt64] = [:],
                chatterByKey: [UInt16: UInt64] = [:]) {
        self.framesIn = framesIn
        self.eventsIn = eventsIn
        self.framesOut = framesOut
        self.eventsOut = eventsOut
        self.synDropped = synDropped
        self.mscDropped = mscDropped
        self.droppedByFilter = droppedByFilter
        self.chatterByKey = chatterByKey
    }
}

/// Everything a `STATE` response says about one device. The server fills it from the state
/// store; the codec only writes it, so the wire format does not depend on the store's shape.
public struct DeviceStateReport: Hashable, Sendable {
    /// The device (written in full: summary, capabilities, axes, properties, udev).
    public var device: DeviceInfo
    /// `EV_KEY` codes currently down.
    public var keysDown: [UInt16]
    /// Current value per `ABS_*` code.
    public var abs: [UInt16: Int32]
    /// Current state per `SW_*` code.
    public var switches: [UInt16: Int32]
    /// Current state per `LED_*` code.
    public var leds: [UInt16: Int32]
    /// Time of the last frame (monotonic ns), nil if none yet.
    public var lastEventTime: Int64?
    /// The device's counters.
    public var counters: DeviceCounters

    /// Creates a report.
    public init(device: DeviceInfo, keysDown: [UInt16] = [], abs: [UInt16: Int32] = [:],
                switches: [UInt16: Int32] = [:], leds: [UInt16: Int32] = [:], lastEventTime: Int64? = nil,
                counters: DeviceCounters = DeviceCounters()) {
        self.device = device
        self.keysDown = keysDown
        self.abs = abs
        self.switches = switches
        self.leds = leds
        self.lastEventTime = lastEventTime
        self.counters = counters
    }
}

/// One connected client, for `STATS`.
public struct ClientStats: Hashable, Sendable {
    /// Server-assigned client number.
    public var client: UInt64
    /// Peer process id (`SO_PEERCRED`), if known.
    public var pid: Int32?
    /// Peer user id, if known.
    public var uid: UInt32?
    /// The `id` of the client's active `WATCH`.
    public var tag: RequestTag?
    /// The stream watched, nil when not watching.
    public var stream: StreamKind?
    /// Stream messages sent.
    public var sent: UInt64
    /// Stream messages dropped by the client's `max_rate`.
    public var dropped: UInt64
    /// Bytes queued for the client right now.
    public var buffered: Int

    /// Creates client statistics.
    public init(client: UInt64, pid: Int32? = nil, uid: UInt32? = nil, tag: RequestTag? = nil,
                stream: StreamKind? = nil, sent: UInt64 = 0, dropped: UInt64 = 0, buffered: Int = 0) {
        self.client = client
        self.pid = pid
        self.uid = uid
        self.tag = tag
        self.stream = stream
        self.sent = sent
        self.dropped = dropped
        self.buffered = buffered
    }
}

/// Everything a `STATS` response says.
public struct ServerStats: Hashable, Sendable {
    /// evflowd's release.
    public var release: String
    /// Seconds since start.
    public var uptime: Double
    /// Current monotonic time (ns).
    public var now: Int64
    /// Devices present.
    public var devices: Int
    /// Clients connected.
    public var clients: Int
    /// Clients watching.
    public var watchers: Int
    /// The reactive core's live-resource counter.
    public var liveResources: Int
    /// Events removed per filter, over all devices.
    public var droppedByFilter: [String: UInt64]
    /// Clients closed since start, per reason (missing reasons count 0).
    public var closed: [CloseReason: UInt64]
    /// One entry per connected client.
    public var clientList: [ClientStats]
    /// Events removed per filter, per device (`device_dropped`).
    public var deviceDropped: [DeviceID: [String: UInt64]] = [:]
    /// Per device, the keys and buttons whose spurious-release debounce turned on by itself
    /// (`spurious_release`; code names).
    public var spuriousRelease: [DeviceID: [String]] = [:]
    /// Per device with a virtual twin, the frames written to it and the failed writes
    /// (`device_output`, 1.3).
    public var deviceOutput: [DeviceID: DeviceOutputCounters] = [:]

    /// Creates statistics.
    public init(release: String, uptime: Double, now: Int64, devices: Int, clients: Int, watchers: Int,
                liveResources: Int, droppedByFilter: [String: UInt64] = [:], closed: [CloseReason: UInt64] = [:],
                clientList: [ClientStats] = []) {
        self.release = release
        self.uptime = uptime
        self.now = now
        self.devices = devices
        self.clients = clients
        self.watchers = watchers
        self.liveResources = liveResources
        self.droppedByFilter = droppedByFilter
        self.closed = closed
        self.clientList = clientList
    }
}

/// A `LATENCY` response: frame ages (ns) per stage (docs/protocol.md, LATENCY).
public struct LatencyReport: Hashable, Sendable {
    /// The clock the ages are on.
    public var clock: LatencyClock
    /// Every device since evflowd started (and `sent`, over all clients), per stage.
    public var total: [LatencyStage: LatencySummary]
    /// Per present device, `read` and `filtered`.
    public var devices: [DeviceID: [LatencyStage: LatencySummary]]

    /// Creates a report.
    public init(clock: LatencyClock, total: [LatencyStage: LatencySummary] = [:],
                devices: [DeviceID: [LatencyStage: LatencySummary]] = [:]) {
        self.clock = clock
        self.total = total
        self.devices = devices
    }
}
