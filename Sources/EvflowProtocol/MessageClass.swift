/// The wire classes of the protocol (a message's `class` member), one table for both ends:
/// a request's class is also the class of its response (docs/protocol.md).
public enum MessageClass: String, CaseIterable, Hashable, Sendable {
    /// The greeting a client receives first.
    case version = "VERSION"
    /// The device list, asked for and answered.
    case devices = "DEVICES"
    /// One device's (or sensor's) state, asked for and answered.
    case state = "STATE"
    /// Server statistics, asked for and answered.
    case stats = "STATS"
    /// Starting or replacing a subscription, and its acknowledgement.
    case watch = "WATCH"
    /// Stopping a subscription, and its acknowledgement.
    case unwatch = "UNWATCH"
    /// The liveness check and its answer.
    case ping = "PING"
    /// Prometheus metrics, asked for and answered (1.1).
    case metrics = "METRICS"
    /// Frame ages, asked for and answered (1.1).
    case latency = "LATENCY"
    /// One device's BounceKeys and SlowKeys, read or changed live, and the answer (1.6).
    case accessibility = "ACCESSIBILITY"
    /// A request that failed.
    case error = "ERROR"
    /// The server closing the connection.
    case close = "CLOSE"
    /// One report from a watched device.
    case frame = "FRAME"
    /// A device was added, removed or could not be opened.
    case device = "DEVICE"
    /// One sample of a watched sensor (1.4).
    case sample = "SAMPLE"
    /// A watched sensor came or went (1.4).
    case sensor = "SENSOR"
    /// One gesture of a key of a watched device (1.5).
    case gesture = "GESTURE"
    /// A watched device's battery changed (1.8).
    case battery = "BATTERY"
}
