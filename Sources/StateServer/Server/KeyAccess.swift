#if canImport(Glibc)
import Glibc
#endif
import EvflowProtocol
import InputModel

/// Who sees key codes (docs/protocol.md §7, "Key codes"): root, the server's own user and
/// the members of the configured key groups; every other client gets them hidden
/// (`KeyPrivacy`).
///
/// Decided once per connection, at admission, from the credentials the kernel recorded at
/// `connect()` (`PeerCredentials`: `SO_PEERCRED` and `SO_PEERGROUPS`), so a client keeps what
/// it was given for its whole connection and nothing is decided per frame.
struct KeyAccess: Sendable {
    /// Uids that always see key codes.
    let trustedUIDs: Set<UInt32>
    /// Groups whose members (primary or supplementary group at connect) see key codes.
    let groups: Set<UInt32>

    /// The policy of a server with `configuration`: root and the server's effective uid are
    /// trusted unless `trustRootAndSelf` is off (tests, which run as root, turn it off to be
    /// an ordinary user).
    init(configuration: StateServerConfiguration, trustRootAndSelf: Bool) {
        trustedUIDs = trustRootAndSelf ? [0, geteuid()] : []
        groups = configuration.keysGIDs
    }

    /// What a peer may see; a peer whose credentials could not be read sees no keys.
    func visibility(for peer: PeerCredentials?) -> KeyVisibility {
        guard let peer else { return .hidden }
        if trustedUIDs.contains(peer.uid) || groups.contains(peer.gid) { return .visible }
        return peer.groups.contains(where: groups.contains) ? .visible : .hidden
    }

    /// The `ERROR` for a `WATCH` that selects a hidden code of a client that may not see keys.
    static func refusal(of request: WatchRequest, keys: KeyVisibility, tag: RequestTag?) -> ProtocolError? {
        guard keys == .hidden, let code = KeyPrivacy.firstHiddenCode(in: request.events) else { return nil }
        return ProtocolError(.hiddenKeyCode(EventNames.codeText(type: code.type, code: code.code)),
                             requestClass: "WATCH", tag: tag)
    }
}
