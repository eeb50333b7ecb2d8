import ArgumentParser
import EvflowProtocol

/// `evflowctl accessibility DEVICE [bouncekeys T] [slowkeys T]`: shows or switches a device's
/// BounceKeys and SlowKeys live (`ACCESSIBILITY`, docs/protocol.md), so a person can turn them
/// on without editing the configuration.
struct Accessibility: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show or switch a keyboard's BounceKeys and SlowKeys live.",
        discussion: """
        With no setting, shows the device's filters. Each setting is a filter name \
        (bouncekeys, slowkeys) and a time: 300ms, 0.5s, a bare number of milliseconds, off, \
        or config (back to the configuration file's value). A live value lasts until evflowd \
        stops: reloads keep it, and the device finds it again when plugged back in. Changing \
        a setting is for root, evflowd's user and the key groups.
        Example: evflowctl accessibility "AT Translated Set 2 keyboard" bouncekeys 300ms
        """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Device id or exact name.") var device: String
    @Argument(help: "Settings: bouncekeys|slowkeys TIME|off|config, repeated.") var settings: [String] = []

    /// A time as the user writes it: `300ms`, `0.5s`, `300` (ms), `off`, `config`.
    static func value(_ text: String) throws -> AccessibilityValue {
        let t = text.lowercased()
        if t == "config" { return .config }
        if t == "off" || t == "0" { return .milliseconds(0) }
        var number = t, scale = 1.0
        if t.hasSuffix("ms") { number = String(t.dropLast(2)) } else if t.hasSuffix("s") { number = String(t.dropLast()); scale = 1000 }
        guard let v = Double(number), v.isFinite, v >= 0, (v * scale).rounded() == v * scale,
              v * scale <= Double(AccessibilityRequest.maxMilliseconds) else {
            throw ValidationError("bad time '\(text)': whole milliseconds up to \(AccessibilityRequest.maxMilliseconds) (300ms, 0.5s, 300), off or config")
        }
        return .milliseconds(Int64(v * scale))
    }

    /// The request the words ask for.
    func request() throws -> AccessibilityRequest {
        guard settings.count % 2 == 0 else { throw ValidationError("each setting is a name and a time (bouncekeys 300ms)") }
        var r = AccessibilityRequest(device: device)
        for i in stride(from: 0, to: settings.count, by: 2) {
            switch settings[i].lowercased() {
            case "bouncekeys", "bounce_keys", "bounce": r.bounceKeys = try Self.value(settings[i + 1])
            case "slowkeys", "slow_keys", "slow": r.slowKeys = try Self.value(settings[i + 1])
            default: throw ValidationError("unknown filter '\(settings[i])' (bouncekeys or slowkeys)")
            }
        }
        return r
    }

    func validate() throws { _ = try request() }

    func run() throws {
        let request = try request()
        try runReporting {
            let reply = try DaemonClient(socketPath: global.socketPath).request(Request(.accessibility(request)))
            guard case .accessibility(let report, _) = reply.message else { throw CtlFailure.protocolError("unexpected reply") }
            if global.json { printJSON(reply); return }
            print(Self.render(report), terminator: "")
        }
    }

    /// The report as lines: `bouncekeys 300ms (live)`.
    static func render(_ r: AccessibilityReport) -> String {
        func time(_ ns: Int64) -> String {
            ns == 0 ? "off" : ns % 1_000_000 == 0 ? "\(ns / 1_000_000)ms" : "\(Double(ns) / 1e6)ms"
        }
        func source(_ name: String) -> String { r.live.contains(name) ? "live" : "configuration" }
        var s = "\(r.device.rawValue)\n"
        s += "  bouncekeys \(time(r.bounceKeys)) (\(source("bounce_keys")))\n"
        s += "  slowkeys   \(time(r.slowKeys)) (\(source("slow_keys")))\n"
        if !r.keys { s += "  (no keyboard keys: the filters act on nothing)\n" }
        return s
    }
}
