import Foundation
import InputModel
import Recording

/// The hot-plug session fixtures (`Tests/Fixtures/sessions/*.session`), built from real
/// recordings: their descriptions and their events, with add/remove times chosen here.
/// `SessionFixtureFileTests` checks that the committed files are exactly what these write
/// (`EVFLOW_UPDATE_GOLDEN=1` rewrites them), and the golden hot-plug tests read the files.
enum SessionFixtures {
    static let ms: Int64 = 1_000_000
    static let keyboardPath = "evemu-devices/keyboards/Lenovo ThinkPad Compact USB Keyboard with TrackPoint.keyboard.events"
    static let mousePath = "evemu-devices/mice/Ultrathin Touch Mouse.events"
    static let ps2MousePath = "evemu-devices/mice/PS2 Generic Mouse.events"
    static let coverPath = "evemu-devices/misc/Microsoft Surface Type Cover.events"

    static func device(_ path: String) throws -> RecordedDevice {
        try Recording.read(contentsOf: Fixtures.recording(path)).devices[0]
    }

    static func shifted(_ events: [InputEvent], by offset: Int64) -> [InputEvent] {
        events.map { var e = $0; e.time += offset; return e }
    }

    /// The files, by name.
    static let all: [(name: String, make: @Sendable () throws -> Session)] = [
        ("dock-unplugged-key-held.session", dock),
        ("come-and-go-100.session", comeAndGo),
        ("two-identical-keyboards.session", twoIdentical),
    ]

    static func url(_ name: String) -> URL {
        Fixtures.root.appendingPathComponent("sessions").appendingPathComponent(name)
    }

    /// A mouse present throughout (its first 3 s of motion); the dock's keyboard plugged in at
    /// 0.5 s, its recording played (it ends with KEY_LEFTCTRL and KEY_C held, at 1.9 and
    /// 2.06 s), and the dock pulled out at 2.5 s with both keys still down.
    static func dock() throws -> Session {
        let keyboard = try device(keyboardPath)
        let mouse = try device(mousePath)
        let mouseEvents = mouse.events.prefix { $0.time <= 3_000 * ms }
        return Session(devices: [SessionDevice(handle: "mouse", info: mouse.info),
                                 SessionDevice(handle: "dock-kbd", info: keyboard.info)],
                       appearances: [
                           SessionAppearance(device: 0, added: 0, removed: nil, events: Array(mouseEvents)),
                           SessionAppearance(device: 1, added: 500 * ms, removed: 2_500 * ms,
                                             events: shifted(keyboard.events, by: 500 * ms)),
                       ])
    }

    /// The PS/2 mouse plugged in every 100 ms and pulled out 50 ms later, 100 times; each time
    /// it sends the next three of its recorded frames (their events), 10 ms apart.
    static func comeAndGo() throws -> Session {
        let mouse = try device(ps2MousePath)
        let frames = mouse.frames().frames
        var appearances: [SessionAppearance] = []
        for k in 0..<100 {
            let start = Int64(k) * 100 * ms
            var events: [InputEvent] = []
            for j in 0..<3 {
                let time = start + Int64(j + 1) * 10 * ms
                for e in frames[3 * k + j].events { events.append(InputEvent(time: time, type: e.type, code: e.code, value: e.value)) }
                events.append(InputEvent(time: time, type: EventType.syn, code: SynCode.report, value: 0))
            }
            appearances.append(SessionAppearance(device: 0, added: start, removed: start + 50 * ms, events: events))
        }
        return Session(devices: [SessionDevice(handle: "ps2", info: mouse.info)], appearances: appearances)
    }

    /// Two Surface Type Covers at once, the same model on two USB ports (so two ids, as evflowd
    /// derives them from `phys`): the first presses KEY_ENTER at 4.59 s and holds it until it is
    /// removed at 6 s; the second, plugged in at 0.5 s, plays the same frames 0.5 s later and
    /// also releases (5.09 s down, 5.21 s up), and is removed at 6.5 s.
    static func twoIdentical() throws -> Session {
        let cover = try device(coverPath)
        let frames = cover.frames().frames
        func events(_ frames: ArraySlice<InputFrame>, by offset: Int64) -> [InputEvent] {
            frames.flatMap { f in
                shifted(f.events, by: offset) + [InputEvent(time: f.time + offset, type: EventType.syn, code: SynCode.report, value: 0)]
            }
        }
        func info(port: Int) -> DeviceInfo {
            var info = cover.info
            info.id = DeviceID(name: info.name, inputID: info.inputID, phys: "usb-0000:00:14.0-\(port)/input0", uniq: nil)
            return info
        }
        return Session(devices: [SessionDevice(handle: "cover-1", info: info(port: 1)),
                                 SessionDevice(handle: "cover-2", info: info(port: 2))],
                       appearances: [
                           SessionAppearance(device: 0, added: 0, removed: 6_000 * ms, events: events(frames[0...1], by: 0)),
                           SessionAppearance(device: 1, added: 500 * ms, removed: 6_500 * ms,
                                             events: events(frames[0...2], by: 500 * ms)),
                       ])
    }
}
