import EvflowProtocol
import Foundation
import InputModel
import Recording

extension Record {
    /// `record --sensors`: the sensors `DEVICES` lists, then a raw `WATCH` of all sensors
    /// (its input-device frames ignored), each `SAMPLE` recorded until a limit or a signal
    /// (docs/formats/sensors.md, "Recording").
    func recordSensors() throws {
        try runReporting {
            let client = try DaemonClient(socketPath: global.socketPath)
            guard case .devices(_, let present, _) = try client.request(Request(.devices)).message else {
                throw CtlFailure.protocolError("unexpected reply")
            }
            guard !present.isEmpty else { throw CtlFailure.protocolError("evflowd has no sensor: nothing to record") }
            installStopHandlers()
            let reply = try client.request(Request(.watch(WatchRequest(stream: .raw, sensors: ["all"])), tag: .string("evflowctl-record")))
            guard case .watch = reply.message else { throw CtlFailure.protocolError("unexpected reply") }
            writeNote("recording \(present.count) sensor(s); Ctrl-C to stop")
            var recorder = SensorRecorder(sensors: present)
            let start = SessionCapture.monotonicNow()
            while stopRequested == 0, count.map({ recorder.sampleCount < $0 }) ?? true,
                  duration.map({ SessionCapture.monotonicNow() - start < $0 }) ?? true {
                let message: ServerMessage
                switch try client.readMessage(timeoutMillis: 100) {
                case .end: throw CtlFailure.unavailable("evflowd closed the connection")
                case .timedOut: continue
                case .reply(let r): message = r.message
                }
                switch message {
                case .sample(let s): recorder.sample(of: s.device, time: s.time, values: s.values)
                case .close(let c): throw CtlFailure.unavailable("evflowd closed the connection (\(c.reasonText)): \(c.message)")
                default: continue   // input devices' frames and notices: not recorded here
                }
            }
            if recorder.unknownSamples > 0 {
                writeNote("\(recorder.unknownSamples) sample(s) of sensors added while recording were not recorded")
            }
            let bytes = Array(recorder.recording.written().utf8)
            if let output {
                guard FileManager.default.createFile(atPath: output, contents: Data(bytes)) else {
                    throw CtlFailure.io("cannot write \(output)")
                }
                writeNote("\(recorder.sampleCount) sample(s) of \(present.count) sensor(s) written to \(output)")
            } else {
                FileHandle.standardOutput.write(Data(bytes))
            }
        }
    }
}
