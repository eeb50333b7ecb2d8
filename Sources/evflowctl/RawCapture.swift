import EvflowProtocol
import Foundation
import InputModel
import Recording

/// One device's raw stream (before the noise filters) from a running evflowd, as the events
/// of a recording: each frame's events followed by its `SYN_REPORT`. `record` writes them as
/// evemu; `analyze --live` analyses them.
struct RawCapture {
    /// The device as evflowd describes it.
    var info: DeviceInfo
    /// The events, in time order, at their kernel times.
    var events: [InputEvent] = []
    /// Frames captured.
    var frames = 0

    /// Captures `device` (id or exact name) until Ctrl-C, `count` frames, `duration` nanoseconds,
    /// the device's removal or the daemon closing; `started` is called once streaming has begun.
    static func run(_ client: DaemonClient, device: String, tag: String, count: Int?, duration: Int64?,
                    started: (DeviceInfo) -> Void) throws -> RawCapture {
        let start = SessionCapture.monotonicNow()
        let timeUp = { duration.map { SessionCapture.monotonicNow() - start >= $0 } ?? false }
        let state = try client.request(Request(.state(device: device)))
        guard case .state(let report, _) = state.message else { throw CtlFailure.protocolError("unexpected reply") }
        var capture = RawCapture(info: report.device)
        _ = try client.request(Request(.watch(WatchRequest(devices: [.id(capture.info.id)], stream: .raw)), tag: .string(tag)))
        started(capture.info)
        installStopHandlers()
        loop: while stopRequested == 0, count.map({ capture.frames < $0 }) ?? true, !timeUp() {
            let m: ServerMessage
            switch try client.readMessage(timeoutMillis: 200) {
            case .end: break loop
            case .timedOut: continue
            case .reply(let r): m = r.message
            }
            switch m {
            case .frame(let f):
                capture.events.append(contentsOf: f.frame.events)
                capture.events.append(InputEvent(time: f.frame.time, type: EventType.syn, code: SynCode.report, value: 0))
                capture.frames += 1
            case .device(.removed), .close:
                break loop
            default:
                continue
            }
        }
        return capture
    }
}
