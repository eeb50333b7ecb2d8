import InputModel

/// Whether a client may see which key a key event is (docs/protocol.md §7, "Key codes").
///
/// Sent in the greeting (`"keys"`); decided once per connection, from the peer's credentials
/// at connect.
public enum KeyVisibility: String, Hashable, Sendable {
    /// Key codes as the device reported them.
    case visible
    /// Key codes replaced by `KeyPrivacy.placeholder`, scan codes left out; times and values kept.
    case hidden
}

/// What a client without the right to see keys gets instead of key codes.
///
/// Keystrokes are passwords: a client that may not see them still gets every key event, at
/// its time and with its value (press, release, repeat), but the code names no key. What
/// identifies a key:
/// - `EV_KEY` codes that are keys, i.e. every code `CodeRange.isButton` does not call a
///   button. Buttons (`BTN_LEFT`, `BTN_TOUCH`, `BTN_TOOL_*`, joystick buttons) stay visible:
///   they are pointer and touch input, not text.
/// - `MSC_SCAN` and `MSC_RAW`: a keyboard reports the key's scan code beside every key event,
///   which names the key as well as its code does.
///
/// The redaction is a pure function of the event, so a frame redacted once serves every client
/// of a watch shape (`SharedFrameEncoder`), and what a client may select is checked against the
/// same rule (`hides`), so a selection of one key cannot serve as an oracle for it.
public enum KeyPrivacy {
    /// The code every hidden key is written as: `KEY_UNKNOWN` (240), a code clients already
    /// know, so a redacted message is a valid message of the same shape.
    public static let placeholder: UInt16 = 240

    /// `MSC_RAW`, `MSC_SCAN`: the two miscellaneous codes that carry a key's identity.
    @usableFromInline static let mscRaw: UInt16 = 3
    @usableFromInline static let mscScan: UInt16 = 4

    /// Whether an event of this type and code says which key was used.
    @inlinable
    public static func hides(type: UInt16, code: UInt16) -> Bool {
        switch type {
        case EventType.key: return !CodeRange.isButton(code)
        case EventType.msc: return code == mscScan || code == mscRaw
        default: return false
        }
    }

    /// Keys no keymap turns into a character (media, volume, power, `KEY_F13`…`KEY_F24`, the
    /// programmable and macro keys): a `GESTURE` of one of them says nothing of what was typed,
    /// so a client that gets keys hidden still gets its code there (docs/protocol.md §7).
    public static let nonTextKeys: [ClosedRange<UInt16>] = [113...116, 148...149, 163...168, 183...194,
                                                            200...203, 207...208, 224...225, 0x290...0x2ad]

    /// Whether `code` (`EV_KEY`) is a non-text key (`nonTextKeys`).
    public static func isNonText(_ code: UInt16) -> Bool { nonTextKeys.contains { $0.contains(code) } }

    /// Whether a `GESTURE` of `code` names its key only to clients that may see keys: every
    /// key but the non-text ones (buttons are never hidden).
    public static func hidesGesture(code: UInt16) -> Bool {
        hides(type: EventType.key, code: code) && !isNonText(code)
    }

    /// The event as a client that may not see keys gets it: a key's code replaced by the
    /// placeholder (time and value kept), a scan code left out (nil), anything else unchanged.
    @inlinable
    public static func redacted(_ event: InputEvent) -> InputEvent? {
        guard hides(type: event.type, code: event.code) else { return event }
        guard event.type == EventType.key else { return nil }
        var e = event
        e.code = placeholder
        return e
    }

    /// `STATE` as a client that may not see keys gets it: every key down counted as the
    /// placeholder (so the number of keys held stays visible), buttons as they are.
    public static func redacted(_ report: DeviceStateReport) -> DeviceStateReport {
        var r = report
        r.keysDown = report.keysDown.map { hides(type: EventType.key, code: $0) ? placeholder : $0 }
        return r
    }

    /// `STATS` as a client that may not see keys gets it: the keys among `spurious_release`
    /// written as the placeholder (buttons as they are).
    public static func redacted(_ stats: ServerStats) -> ServerStats {
        var s = stats
        let unknown = EventNames.codeText(type: EventType.key, code: placeholder)
        s.spuriousRelease = stats.spuriousRelease.mapValues { names in
            names.map { name in
                // A name that is no key name (a number) counts as a key: hidden rather than shown.
                guard let code = EventNames.code(named: name, type: EventType.key) else { return unknown }
                return hides(type: EventType.key, code: code) ? unknown : name
            }
        }
        return s
    }

    /// The first code of `selection` that would tell a hidden key apart, if any: a client
    /// that may not see keys cannot select one key (its frames would say which key it is).
    public static func firstHiddenCode(in selection: EventSelection) -> EventCode? {
        selection.codes.first { hides(type: $0.type, code: $0.code) }
    }
}
