import EvflowProtocol
import InputModel
import Pipeline

/// `ACCESSIBILITY` (protocol 1.6): a device's BounceKeys and SlowKeys, read by any client,
/// changed live only by a client that sees key codes (root, evflowd's user, the key groups:
/// `KeyAccess`) — switching a keyboard's filters is as much the owner's business as reading
/// its keys. Event loop only.
extension ClientConnection {
    func accessibility(_ request: AccessibilityRequest, tag: RequestTag?) {
        let changes = request.bounceKeys != nil || request.slowKeys != nil
        if changes && loop.value.keys != .visible {
            let field = request.bounceKeys != nil ? "bounce_keys" : "slow_keys"
            respond { $0.appendError(ProtocolError(.notPermitted(field: field), requestClass: "ACCESSIBILITY", tag: tag)) }
            return
        }
        let id: DeviceID
        switch core.deviceID(for: request.device) {
        case .success(let found): id = found
        case .failure(let error):
            respond { $0.appendError(ProtocolError(error.kind, requestClass: "ACCESSIBILITY", tag: tag)) }
            return
        }
        func time(_ v: AccessibilityValue?) -> AccessibilityChange.Value? {
            switch v {
            case nil: return nil
            case .config?: return .config
            case .milliseconds(let n)?: return .time(n * 1_000_000)
            }
        }
        let change = AccessibilityChange(bounceKeys: time(request.bounceKeys), slowKeys: time(request.slowKeys))
        // Answered from the hub's scheduler, where the change takes effect; later request lines
        // wait meanwhile (as for LATENCY), so responses stay in request order.
        loop.value.answering = true
        let eventLoop = channel.eventLoop
        let device = request.device
        core.hub.setAccessibility(of: id, change) { [weak self] status in
            eventLoop.execute {
                guard let self else { return }
                self.loop.value.answering = false
                guard !self.loop.value.closed else { return }
                if let status {
                    var live: [String] = []
                    if status.bounceKeysLive { live.append("bounce_keys") }
                    if status.slowKeysLive { live.append("slow_keys") }
                    let report = AccessibilityReport(device: status.device, bounceKeys: status.settings.bounceKeys,
                                                     slowKeys: status.settings.slowKeys, live: live, keys: status.hasKeys)
                    self.respond { $0.appendAccessibility(report, tag: tag) }
                } else {   // gone in between
                    self.respond { $0.appendError(ProtocolError(.unknownDevice(device), requestClass: "ACCESSIBILITY", tag: tag)) }
                }
                self.processLines()
            }
        }
    }
}

extension ServerCore {
    /// The present device `device` names: its id, else the exact name of exactly one device.
    func deviceID(for device: String) -> Result<DeviceID, ProtocolError> {
        let present = hub.devices
        if let d = present.first(where: { $0.id.rawValue == device }) { return .success(d.id) }
        let named = present.filter { $0.name == device }
        guard !named.isEmpty else { return .failure(ProtocolError(.unknownDevice(device))) }
        guard named.count == 1 else { return .failure(ProtocolError(.ambiguousDevice(device))) }
        return .success(named[0].id)
    }
}
