import InputModel

/// A recording of several devices that come and go: each device's description once, and one
/// ordered timeline of `add`, event and `remove` entries on one time base.
///
/// The file format is docs/formats/session.md (`SessionReader`, `SessionWriter`). Times are
/// nanosecond offsets from the file's time base, the raw timestamp of its first timeline line
/// (as for `Recording`), so the first entry is at 0 ns. Timeline order is the order things
/// happened: entries never go back in time, and entries with equal times keep their order.
/// A device may be added and removed any number of times; each `add` … `remove` is one
/// *appearance*, and every appearance of a device has the device's one description and id.
public struct Session: Hashable, Sendable {
    /// The devices, in file order; timeline entries refer to them by index.
    public var devices: [SessionDevice]
    /// Every add, event and removal, in the order they happened.
    public var timeline: [SessionEntry]
    /// Raw timestamp (microseconds, as written in the file) that maps to time 0.
    public var startMicroseconds: Int64

    /// Creates a session.
    public init(devices: [SessionDevice], timeline: [SessionEntry], startMicroseconds: Int64 = 0) {
        self.devices = devices
        self.timeline = timeline
        self.startMicroseconds = startMicroseconds
    }

    /// A session of `devices` whose timeline is `appearances` merged by time: entries of
    /// equal time keep the order of `appearances`, and within one appearance its `add`, its
    /// events, then its `remove`. Each appearance's events must lie between its `added` and
    /// `removed` times, and one device's appearances must not overlap (`SessionReader`
    /// refuses a file written from anything else).
    public init(devices: [SessionDevice], appearances: [SessionAppearance], startMicroseconds: Int64 = 0) {
        var entries: [SessionEntry] = []
        for part in appearances {
            entries.append(SessionEntry(time: part.added, device: part.device, action: .add))
            for event in part.events { entries.append(SessionEntry(device: part.device, event: event)) }
            if let removed = part.removed {
                entries.append(SessionEntry(time: removed, device: part.device, action: .remove))
            }
        }
        // Stable: equal times keep the order above.
        let timeline = entries.enumerated().sorted {
            $0.element.time != $1.element.time ? $0.element.time < $1.element.time : $0.offset < $1.offset
        }.map(\.element)
        self.init(devices: devices, timeline: timeline, startMicroseconds: startMicroseconds)
    }

    /// Every appearance of every device, in the order of their `add` entries.
    public func appearances() -> [SessionAppearance] {
        var result: [SessionAppearance] = []
        var open: [Int: Int] = [:]   // device → index in result while present
        for entry in timeline {
            switch entry.action {
            case .add:
                open[entry.device] = result.count
                result.append(SessionAppearance(device: entry.device, added: entry.time, removed: nil, events: []))
            case .event(let type, let code, let value):
                guard let index = open[entry.device] else { continue }
                result[index].events.append(InputEvent(time: entry.time, type: type, code: code, value: value))
            case .remove:
                guard let index = open.removeValue(forKey: entry.device) else { continue }
                result[index].removed = entry.time
            }
        }
        return result
    }

    /// The appearances of device `device` (an index into `devices`), in order.
    public func appearances(of device: Int) -> [SessionAppearance] {
        appearances().filter { $0.device == device }
    }

    /// Device `device`'s part as a plain recording (what `evflowctl convert` writes as evemu).
    ///
    /// With `appearance` (0-based, among the device's appearances) that appearance's events
    /// exactly, an unfinished last frame included (as evemu-record leaves it when stopped).
    /// Without, every appearance's events one after the other; events after the last
    /// `SYN_REPORT` of an appearance that is not the last are left out, because in one evemu
    /// stream they would join the next appearance's first frame (replay drops them too).
    /// Times stay on the session's time base (`startMicroseconds` as the start); the
    /// description, LED and switch states are the device's. Nil when there is no such
    /// appearance.
    public func recordedDevice(_ device: Int, appearance: Int? = nil) -> RecordedDevice? {
        guard devices.indices.contains(device) else { return nil }
        let all = appearances(of: device)
        let events: [InputEvent]
        if let appearance {
            guard all.indices.contains(appearance) else { return nil }
            events = all[appearance].events
        } else {
            var joined: [InputEvent] = []
            for (i, part) in all.enumerated() {
                if i == all.count - 1 {
                    joined += part.events
                } else if let lastSyn = part.events.lastIndex(where: \.isSynReport) {
                    joined += part.events[...lastSyn]
                }
            }
            events = joined
        }
        let d = devices[device]
        return RecordedDevice(info: d.info, events: events, ledStates: d.ledStates, switchStates: d.switchStates)
    }

    /// The indices of the devices `text` names: a handle or a device id (exact), otherwise
    /// every device whose name is exactly `text`.
    public func devices(named text: String) -> [Int] {
        if let i = devices.firstIndex(where: { $0.handle == text || $0.info.id.rawValue == text }) { return [i] }
        return devices.indices.filter { devices[$0].info.name == text }
    }

    /// Total number of events (`SYN_REPORT`s included), over every device and appearance.
    public var eventCount: Int {
        timeline.reduce(0) { n, entry in if case .event = entry.action { return n + 1 } else { return n } }
    }
}

/// One device of a session: the file's short handle for it, its description and id, and its
/// LED and switch states when first added.
public struct SessionDevice: Hashable, Sendable {
    /// The handle timeline lines name the device by (`kbd`, `d2`): 1–32 of `A-Z a-z 0-9 _ . -`.
    public var handle: String
    /// Identity, classes and capabilities; `info.id` is the id every appearance gets.
    public var info: DeviceInfo
    /// `L:` lines: LED code → state when the device is added (evemu writes only lit LEDs).
    public var ledStates: [UInt16: Int32]
    /// `S:` lines: switch code → state when the device is added (only non-zero ones).
    public var switchStates: [UInt16: Int32]

    /// Creates a device.
    public init(handle: String, info: DeviceInfo, ledStates: [UInt16: Int32] = [:],
                switchStates: [UInt16: Int32] = [:]) {
        self.handle = handle
        self.info = info
        self.ledStates = ledStates
        self.switchStates = switchStates
    }

    /// Longest handle, in bytes.
    public static let maxHandleLength = 32

    /// Whether `text` is a valid handle.
    public static func isValidHandle(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return !bytes.isEmpty && bytes.count <= maxHandleLength && bytes.allSatisfy(isHandleByte)
    }

    static func isHandleByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
            || b == 0x5F || b == ASCII.dot || b == ASCII.minus
    }
}

/// One line of a session's timeline.
public struct SessionEntry: Hashable, Sendable {
    /// What happened.
    public enum Action: Hashable, Sendable {
        /// The device was plugged in (a new appearance starts).
        case add
        /// The device sent one event (`SYN_REPORT`s included: they end frames).
        case event(type: UInt16, code: UInt16, value: Int32)
        /// The device was unplugged (its appearance ends).
        case remove
    }

    /// Nanoseconds from the session's time base.
    public var time: Int64
    /// Index of the device in `Session.devices`.
    public var device: Int
    /// What happened.
    public var action: Action

    /// Creates an entry.
    public init(time: Int64, device: Int, action: Action) {
        self.time = time
        self.device = device
        self.action = action
    }

    /// An event entry for `event` (its time is the entry's).
    public init(device: Int, event: InputEvent) {
        self.init(time: event.time, device: device,
                  action: .event(type: event.type, code: event.code, value: event.value))
    }
}

/// One appearance of a device: from its `add` to its `remove` (or the end of the session).
public struct SessionAppearance: Hashable, Sendable {
    /// Index of the device in `Session.devices`.
    public var device: Int
    /// Time of the `add`.
    public var added: Int64
    /// Time of the `remove`; nil when the device is still present at the end of the session.
    public var removed: Int64?
    /// The device's events during this appearance, in order.
    public var events: [InputEvent]

    /// Creates an appearance.
    public init(device: Int, added: Int64, removed: Int64?, events: [InputEvent]) {
        self.device = device
        self.added = added
        self.removed = removed
        self.events = events
    }
}
