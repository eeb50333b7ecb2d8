import EvflowProtocol
import Foundation
import InputModel
import Recording
#if canImport(Glibc)
import Glibc
#endif

/// `record --all`: every device evflowd has, and every device added or removed while
/// recording, into one session file (docs/formats/session.md, "Recording").
///
/// The devices present are described first (`DEVICES`, then `STATE` of each); then one raw
/// `WATCH` of all devices gives the devices present (`matched`, added at time 0) and, in
/// order, their `FRAME`s and `DEVICE` notices. A device added later is described by a `STATE`
/// request sent when it is first seen; its answer arrives among the stream messages, so the
/// messages are handled in arrival order as they come (none is skipped) and the description
/// replaces the summary when it arrives.
struct SessionCapture {
    /// What stops the capture (besides a signal or the daemon closing).
    var maxFrames: Int?
    /// Nanoseconds after the start.
    var maxNanoseconds: Int64?
    /// Where notes about what could not be recorded go.
    var note: (String) -> Void

    /// What was captured.
    struct Result {
        var session: Session
        var frames: Int
    }

    /// Records until a limit, a signal (`stopRequested`) or the end of the connection.
    func run(_ client: DaemonClient) throws -> Result {
        // The devices present are described before watching (no stream yet, so plain
        // request/response); one added or removed before the WATCH is handled below.
        var initial: [DeviceID: DeviceStateReport] = [:]
        guard case .devices(let present, _, _) = try client.request(Request(.devices)).message else {
            throw CtlFailure.protocolError("unexpected reply")
        }
        for device in present {
            do {
                guard case .state(let report, _) = try client.request(Request(.state(device: device.id.rawValue))).message else {
                    throw CtlFailure.protocolError("unexpected reply")
                }
                initial[device.id] = report
            } catch let failure as CtlFailure where failure.code == 65 {
                continue   // gone meanwhile (an ERROR): not in the WATCH's `matched` either
            }
        }
        let reply = try client.request(Request(.watch(WatchRequest(stream: .raw)), tag: .string("evflowctl-record")))
        guard case .watch(_, let matched, _) = reply.message else { throw CtlFailure.protocolError("unexpected reply") }
        let start = Self.monotonicNow()
        var recorder = SessionRecorder()
        var pending: [String: DeviceID] = [:]   // STATE tag → device
        var described: Set<DeviceID> = []
        var next = 0
        func describe(_ id: DeviceID) throws {
            guard !described.contains(id), !pending.values.contains(id) else { return }
            next += 1
            let tag = "evflowctl-describe-\(next)"
            pending[tag] = id
            try client.send(Request(.state(device: id.rawValue), tag: .string(tag)))
        }
        for id in matched {
            if let report = initial[id] {
                recorder.add(report.device, ledStates: report.leds, switchStates: report.switches, at: start)
                described.insert(id)
                continue
            }
            // Added since DEVICES: a placeholder until STATE answers (or the DEVICE notice of
            // its removal gives a summary).
            recorder.add(DeviceInfo(name: "", inputID: InputID(bustype: 0, vendor: 0, product: 0, version: 0), id: id),
                         at: start)
            try describe(id)
        }
        note("recording \(matched.count) device(s) and any added later; Ctrl-C to stop")
        var stopping = false
        var stopDeadline: Int64 = 0
        while true {
            if !stopping {
                let timeUp = maxNanoseconds.map { Self.monotonicNow() - start >= $0 } ?? false
                if stopRequested != 0 || timeUp || maxFrames.map({ recorder.frameCount >= $0 }) == true {
                    stopping = true
                    stopDeadline = Self.monotonicNow() + 2_000_000_000
                }
            }
            // After stopping, only the descriptions still asked for are waited for (2 s at most).
            if stopping && (pending.isEmpty || Self.monotonicNow() >= stopDeadline) { break }
            let message: ServerMessage
            switch try client.readMessage(timeoutMillis: 100) {
            case .end: stopping = true; pending = [:]; continue
            case .timedOut: continue
            case .reply(let r): message = r.message
            }
            switch message {
            case .frame(let f) where !stopping:
                recorder.frame(f.frame, of: f.device)
            case .device(.added(let info)) where !stopping:
                let index = recorder.add(info, at: Self.monotonicNow())
                if !described.contains(info.id) { recorder.describe(index, info: info) }
                try describe(info.id)
            case .device(.removed(let info)) where !stopping:
                if let index = recorder.device(info.id), !described.contains(info.id),
                   recorder.session.devices[index].info.name.isEmpty {
                    recorder.describe(index, info: info)   // the summary, better than the placeholder
                }
                recorder.remove(info.id, at: Self.monotonicNow())
            case .device(.inaccessible(let info, let reason)) where !stopping:
                note("\(info.name) (\(info.id)) cannot be opened by evflowd (\(reason)): not recorded")
            case .state(let report, let tag):
                guard case .string(let t)? = tag, let id = pending.removeValue(forKey: t),
                      let index = recorder.device(id) else { continue }
                described.insert(id)
                recorder.describe(index, info: report.device, ledStates: report.leds, switchStates: report.switches)
            case .error(let e):
                guard case .string(let t)? = e.tag, let id = pending.removeValue(forKey: t) else {
                    throw CtlFailure.protocolError("evflowd: \(e.message)")
                }
                note("\(id): no full description (\(e.message)); its name and ids only")
            case .close(let c):
                note("evflowd closed the connection (\(c.reasonText)): \(c.message)")
                stopping = true
                pending = [:]
            default:
                continue
            }
        }
        return Result(session: recorder.session, frames: recorder.frameCount)
    }

    /// `CLOCK_MONOTONIC` in nanoseconds: the clock of evflowd's event times.
    static func monotonicNow() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }
}

extension Record {
    /// Says so when evflowd hides key codes from this user: the recording then carries the
    /// hidden form (what the daemon sends), which replays with every key the same.
    static func noteHiddenKeys(_ client: DaemonClient) {
        guard client.keys == .hidden else { return }
        FileHandle.standardError.write(Data(("note: evflowd hides key codes from this user: every key is recorded as "
            + "KEY_UNKNOWN and scan codes are left out (buttons, axes and times are as they happened); "
            + "record as root, evflowd's user or a member of its --keys-group for the keys\n").utf8))
    }

    /// `record --all`: a session of every device, written to `output` or standard output.
    func recordAll() throws {
        try runReporting {
            let client = try DaemonClient(socketPath: global.socketPath)
            Self.noteHiddenKeys(client)
            installStopHandlers()
            let capture = SessionCapture(maxFrames: count, maxNanoseconds: duration) {
                writeNote(TerminalText(escaping: $0))   // one line: a line break in it is written out too
            }
            let result = try capture.run(client)
            let session = result.session
            guard !session.devices.isEmpty else {
                throw CtlFailure.protocolError("no device was present or added while recording: nothing written")
            }
            let bytes = SessionWriter.write(session)
            let appearances = session.appearances().count
            if let output {
                guard FileManager.default.createFile(atPath: output, contents: Data(bytes)) else {
                    throw CtlFailure.io("cannot write \(output)")
                }
                writeNote("\(result.frames) frame(s) of \(session.devices.count) device(s), "
                    + "\(appearances) appearance(s) written to \(output)")
            } else {
                FileHandle.standardOutput.write(Data(bytes))
            }
        }
    }
}
