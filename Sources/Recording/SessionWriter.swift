#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import InputModel

/// Writes session files (`# EVFLOW SESSION 1`, docs/formats/session.md) that `SessionReader`
/// reads back.
///
/// Each device block is `D: <handle> <id>` followed by the device's evemu description lines
/// exactly as `EvemuWriter` writes them; the timeline lines carry evemu-record's comments
/// (`# EV_KEY / KEY_A  1`, the milliseconds between one device's `SYN_REPORT`s) so the file
/// reads like evemu's. What an evemu description cannot hold is lost here too (`EvemuWriter`:
/// nanoseconds below the µs, `AbsInfo.value`, types without codes, `phys`/`uniq`/udev
/// properties; classes are derived again on reading). The id is always written, so reading
/// gives the ids the session had.
///
/// The session is written as it is: it should be valid (handles as `SessionDevice`
/// allows, distinct; entries in time order; `add`/`remove` alternating per device, events only
/// while present; every device added at least once), as `SessionReader` and
/// `SessionRecorder` produce them — otherwise the file is refused when read.
public enum SessionWriter {
    /// The file for `session`; times are written as `startMicroseconds + time / 1000`.
    public static func write(_ session: Session) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4096 * session.devices.count + session.timeline.count * 40)
        let appearances = session.timeline.reduce(0) { n, e in e.action == .add ? n + 1 : n }
        out.append(text: SessionReader.magic + "\n")
        out.append(text: "# Written by evflow: \(session.devices.count) device(s), \(appearances) appearance(s), "
            + "\(session.eventCount) event(s); format: docs/formats/session.md\n")
        for device in session.devices {
            out.append(text: "\nD: \(device.handle)")
            if !device.info.id.rawValue.isEmpty {   // an empty id cannot be a field: derived on reading
                out.append(ASCII.space)
                appendID(device.info.id, to: &out)
            }
            out.append(ASCII.newline)
            let id = device.info.inputID
            out.append(text: "# Input device name: \"\(EvemuWriter.nameAsWritten(device.info.name))\"\n")
            out.append(text: "# Input device ID: bus 0x\(String(id.bustype, radix: 16)) "
                + "vendor 0x\(String(id.vendor, radix: 16)) product 0x\(String(id.product, radix: 16)) "
                + "version 0x\(String(id.version, radix: 16))\n")
            EvemuWriter.appendDescription(RecordedDevice(info: device.info, events: [], ledStates: device.ledStates,
                                                         switchStates: device.switchStates), to: &out)
        }
        out.append(ASCII.newline)
        var lastSynMillis = [Int64](repeating: 0, count: session.devices.count)
        for entry in session.timeline {
            let device = session.devices[entry.device]
            let micros = session.startMicroseconds
                + (entry.time >= 0 ? entry.time / 1000 : -((-entry.time + 999) / 1000))
            switch entry.action {
            case .add, .remove:
                out.append(text: entry.action == .add ? "add: " : "remove: ")
                EvemuWriter.appendTime(micros, to: &out)
                out.append(text: " \(device.handle)\t# \(entry.action == .add ? "+++" : "---") "
                    + "\(EvemuWriter.nameAsWritten(device.info.name))\n")
            case .event(let type, let code, let value):
                out.append(text: "E: ")
                EvemuWriter.appendTime(micros, to: &out)
                out.append(text: " \(device.handle) ")
                out.appendHex(type, digits: 4)
                out.append(ASCII.space)
                out.appendHex(code, digits: 4)
                out.append(ASCII.space)
                out.appendDecimal(Int64(value), width: 4)
                EvemuWriter.appendComment(InputEvent(time: entry.time, type: type, code: code, value: value),
                                          startMicroseconds: session.startMicroseconds,
                                          lastSynMillis: &lastSynMillis[entry.device], to: &out)
            }
        }
        return out
    }

    /// Writes `session` to `url` (replacing the file).
    public static func write(_ session: Session, to url: URL) throws {
        try Data(write(session)).write(to: url, options: .atomic)
    }

    /// The id as one field: bytes `!`…`~` as they are, except `%` and `#`; every other byte
    /// (and those two) as `%XX`.
    static func appendID(_ id: DeviceID, to out: inout [UInt8]) {
        let digits = Array("0123456789ABCDEF".utf8)
        for byte in id.rawValue.utf8 {
            if byte > 0x20, byte < 0x7F, byte != 0x25, byte != ASCII.hash {
                out.append(byte)
            } else {
                out += [0x25, digits[Int(byte >> 4)], digits[Int(byte & 0xF)]]
            }
        }
    }
}
