// P1 — FRAME encoding (docs/benchmarks.md "Protocol: P1"): why the server writes FRAME by
// hand while every other message type of EvflowProtocol is an ordinary type.
//
// One FRAME per evdev report is the only message sent per event; this measures encoding it
// the two ways EvflowProtocol can, on the same frames, interleaved in one process:
//   hand-written  MessageWriter.appendFrame (cached quoted names, a reused buffer)
//   Codable       JSONEncoder().encode(FrameMessage) — FrameMessage's Encodable conformance,
//                 one encoder reused, the same members (JSONEncoder does not keep their order)
// The frame is a mouse report (REL_X, REL_Y, BTN_LEFT) with a new time per message. Prints
// ns per message for each (median of `--reps`, default 5), the ratio Codable / hand-written,
// and a checksum (bytes written, newline included) that must agree between the rows.
//
//   swift run -c release --package-path Benchmarks FrameEncoding [--reps N] [--messages N]
import EvflowProtocol
import Foundation
import InputModel

var reps = 5
var messages = 200_000
var args = CommandLine.arguments.dropFirst()
while let a = args.popFirst() {
    switch a {
    case "--reps": reps = Int(args.popFirst() ?? "") ?? reps
    case "--messages": messages = Int(args.popFirst() ?? "") ?? messages
    default:
        FileHandle.standardError.write(Data("unknown argument \(a)\n".utf8))
        exit(2)
    }
}

let device = DeviceID(rawValue: "0003:046d:c52b-1a2b3c4d")
func frame(_ i: Int) -> InputFrame {
    let t = 81_234_567_890_123 + Int64(i) * 1_000_000
    return InputFrame(time: t, events: [
        InputEvent(time: t, type: EventType.rel, code: 0, value: Int32(i % 7) - 3),
        InputEvent(time: t, type: EventType.rel, code: 1, value: Int32(i % 5) - 2),
        InputEvent(time: t, type: EventType.key, code: 0x110, value: Int32(i % 2)),
    ])
}

func handWritten(_ n: Int) -> Int {
    var w = MessageWriter()
    var bytes = 0
    for i in 0..<n {
        w.reset()
        w.appendFrame(device: device, stream: .filtered, frame: frame(i))
        bytes &+= w.bytes.count
    }
    return bytes
}

func codable(_ n: Int) -> Int {
    let encoder = JSONEncoder()
    var bytes = 0
    for i in 0..<n {
        let data = try! encoder.encode(FrameMessage(device: device, stream: .filtered, frame: frame(i)))
        bytes &+= data.count + 1   // + the line's newline
    }
    return bytes
}

func nanos(_ body: () -> Int) -> (ns: Double, checksum: Int) {
    let start = DispatchTime.now().uptimeNanoseconds
    let checksum = body()
    return (Double(DispatchTime.now().uptimeNanoseconds - start), checksum)
}

_ = handWritten(messages / 10)   // warm-up
_ = codable(messages / 10)
var hand: [Double] = [], coded: [Double] = [], ratios: [Double] = []
var checksums = Set<Int>()
for _ in 0..<reps {
    let h = nanos { handWritten(messages) }
    let c = nanos { codable(messages) }
    hand.append(h.ns / Double(messages))
    coded.append(c.ns / Double(messages))
    ratios.append(c.ns / h.ns)
    checksums.formUnion([h.checksum, c.checksum])
}
func median(_ v: [Double]) -> Double { v.sorted()[v.count / 2] }
guard checksums.count == 1 else {
    print("checksums differ: \(checksums.sorted())")
    exit(1)
}
print("| row | ns/message (median of \(reps)) | per-rep ratios |")
print("|---|---|---|")
print("| P1 hand-written MessageWriter.appendFrame | \(String(format: "%.0f", median(hand))) | 1× |")
print("| P1 Codable JSONEncoder(FrameMessage) | \(String(format: "%.0f", median(coded))) | "
      + "\(String(format: "%.1f", median(ratios)))× (\(ratios.map { String(format: "%.1f", $0) }.joined(separator: ", "))) |")
print("checksum \(checksums.first!) bytes for \(messages) messages")
