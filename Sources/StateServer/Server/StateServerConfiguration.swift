import EvflowProtocol

/// How a `StateServer` listens and whom it serves (docs/protocol.md §2, §7).
public struct StateServerConfiguration: Sendable {
    /// Path of the Unix socket; bound, and removed at shutdown, by the server (unless adopted).
    public var socketPath: String
    /// Socket activation: adopt this listening fd instead of binding `socketPath`.
    public var listenFD: Int32?
    /// Mode of the socket file.
    public var socketMode: UInt32 = 0o660
    /// Group the socket file is given (`chown`), nil to keep the server's group.
    public var socketGroup: String? = nil
    /// Peer uids allowed (`SO_PEERCRED`); with `allowedGIDs` also empty, everyone who can connect.
    public var allowedUIDs: Set<UInt32> = []
    /// Peer groups allowed (primary or supplementary); root and the server's own uid always are.
    public var allowedGIDs: Set<UInt32> = []
    /// Groups whose members (primary or supplementary) see key codes; root and the server's
    /// own uid always do, everyone else gets them hidden (docs/protocol.md §7, "Key codes").
    public var keysGIDs: Set<UInt32> = []
    /// Most clients connected at once; the next is closed with `too-many-clients`.
    public var maxClients: Int = ProtocolConstants.defaultMaxClients
    /// Bytes queued for one client (not yet taken by the kernel) before it is dropped as a slow consumer.
    public var outgoingBufferLimit: Int = ProtocolConstants.defaultOutgoingBufferLimit
    /// Most clients of one peer uid connected at once; the next is closed with `too-many-clients`.
    public var maxClientsPerUser: Int = ProtocolConstants.defaultMaxClientsPerUser
    /// A client that sends no request line this long after connecting is closed (`idle`).
    public var idleTimeout: Duration = ProtocolConstants.idleTimeout
    /// A client that is not watching and sends no request line this long after its last one
    /// is closed (`idle`). Watchers may stay silent for ever.
    public var idleTimeoutAfterRequest: Duration = ProtocolConstants.idleTimeoutAfterRequest
    /// The `release` in the greeting and in `STATS`.
    public var release: String

    /// A configuration with the protocol's defaults.
    public init(socketPath: String, release: String) {
        self.socketPath = socketPath
        self.release = release
    }
}
