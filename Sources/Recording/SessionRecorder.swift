import InputModel

/// Builds a `Session` from what a live source reports, in the order it reports it: devices
/// present at the start, devices added and removed, and every frame — what
/// `evflowctl record --all` gets from evflowd's raw `WATCH` stream.
///
/// Times are on the caller's clock (monotonic ns: evflowd's event times and the recorder's
/// own clock for adds and removals); the first `add` is time 0 of the session. The timeline
/// must never go back, so an entry earlier than the one before it (a frame whose events
/// happened before its device's `add` reached the recorder) is moved forward to that time —
/// the order is the order things were reported in.
///
/// A device keeps its handle and description across appearances: an `add` of an id seen
/// before is a new appearance of the same device. An `add` of an id that is present ends the
/// old appearance first (evflowd replaces a device whose removal it has not seen).
public struct SessionRecorder: Sendable {
    /// The session so far.
    public private(set) var session = Session(devices: [], timeline: [])
    /// Frames of devices that were not present (reported before their `add`, or after their
    /// `remove`): not recorded, counted here.
    public private(set) var framesOfAbsentDevices = 0
    /// Frames recorded.
    public private(set) var frameCount = 0
    private var known: [DeviceID: Int] = [:]
    private var present: Set<Int> = []
    private var origin: Int64?
    private var last: Int64 = 0

    /// An empty recorder.
    public init() {}

    /// The device `info` was present at the start or was plugged in, at `time`. Returns its
    /// index in `session.devices`. Its description is `info` with `ledStates` and
    /// `switchStates` (non-zero ones are kept) unless the device was seen before; `describe`
    /// can replace it later (when the full description arrives after the device).
    @discardableResult
    public mutating func add(_ info: DeviceInfo, ledStates: [UInt16: Int32] = [:],
                             switchStates: [UInt16: Int32] = [:], at time: Int64) -> Int {
        let t = place(time)
        let device: Int
        if let index = known[info.id] {
            device = index
            if present.contains(device) {
                session.timeline.append(SessionEntry(time: t, device: device, action: .remove))
            }
        } else {
            device = session.devices.count
            known[info.id] = device
            session.devices.append(SessionDevice(handle: "d\(device + 1)", info: info))
            describe(device, info: info, ledStates: ledStates, switchStates: switchStates)
        }
        present.insert(device)
        session.timeline.append(SessionEntry(time: t, device: device, action: .add))
        return device
    }

    /// Replaces device `device`'s description (its id and handle stay).
    public mutating func describe(_ device: Int, info: DeviceInfo, ledStates: [UInt16: Int32] = [:],
                                  switchStates: [UInt16: Int32] = [:]) {
        var info = info
        info.id = session.devices[device].info.id
        session.devices[device].info = info
        session.devices[device].ledStates = ledStates.filter { $0.value != 0 }
        session.devices[device].switchStates = switchStates.filter { $0.value != 0 }
    }

    /// The index of the device with `id`, if it was ever added.
    public func device(_ id: DeviceID) -> Int? { known[id] }

    /// A frame of device `id`: its events, then its `SYN_REPORT` at the frame's time. Returns
    /// false (and records nothing) when the device is not present.
    @discardableResult
    public mutating func frame(_ frame: InputFrame, of id: DeviceID) -> Bool {
        guard let device = known[id], present.contains(device) else {
            framesOfAbsentDevices += 1
            return false
        }
        for event in frame.events {
            var e = event
            e.time = place(event.time)
            session.timeline.append(SessionEntry(device: device, event: e))
        }
        session.timeline.append(SessionEntry(device: device, event: InputEvent(
            time: place(frame.time), type: EventType.syn, code: SynCode.report, value: 0)))
        frameCount += 1
        return true
    }

    /// The device `id` was unplugged at `time`; nothing when it is not present.
    public mutating func remove(_ id: DeviceID, at time: Int64) {
        guard let device = known[id], present.remove(device) != nil else { return }
        session.timeline.append(SessionEntry(time: place(time), device: device, action: .remove))
    }

    /// `time` on the session's base, never before the previous entry.
    private mutating func place(_ time: Int64) -> Int64 {
        let start = origin ?? time
        origin = start
        let t = max(last, time &- start)
        last = t
        return t
    }
}
