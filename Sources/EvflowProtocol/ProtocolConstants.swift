/// Fixed numbers of the state server protocol (docs/protocol.md).
public enum ProtocolConstants {
    /// Major protocol version: changes when a change could break a client.
    public static let protoMajor = 1
    /// Minor protocol version: changes when members or classes are added.
    public static let protoMinor = 8
    /// Longest request line in bytes, not counting `\n` (or `\r\n`).
    public static let maxRequestLineLength = 4096
    /// A client that has sent no request line this long after connecting is closed (`idle`); default.
    public static let idleTimeout: Duration = .seconds(60)
    /// A client that is not watching and has sent no request line this long since its last one
    /// is closed (`idle`); default.
    public static let idleTimeoutAfterRequest: Duration = .seconds(300)
    /// Default bound on bytes queued for one client before it is dropped (`slow-consumer`).
    public static let defaultOutgoingBufferLimit = 256 * 1024
    /// Default limit on connected clients.
    public static let defaultMaxClients = 64
    /// Default limit on connected clients of one peer uid.
    public static let defaultMaxClientsPerUser = 16
    /// Largest accepted `max_rate` (messages per second).
    public static let maxRateLimit: Double = 100_000
    /// Longest accepted string `id` tag, in UTF-8 bytes.
    public static let maxTagLength = 64
}

/// The formats a `METRICS` response may carry (its `format` member).
public enum MetricsFormat {
    /// Prometheus' text exposition format, version 0.0.4 (what node_exporter's textfile
    /// collector and every Prometheus scraper read).
    public static let prometheusText = "prometheus-text-0.0.4"
}
