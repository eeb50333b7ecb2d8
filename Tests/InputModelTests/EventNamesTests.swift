import CEvdev
import Foundation
import Testing
@testable import InputModel

@Suite struct EventNamesTests {
    @Test func typeNamesBothWays() {
        #expect(EventNames.typeName(EventType.key) == "EV_KEY")
        #expect(EventNames.typeName(EventType.sw) == "EV_SW")
        #expect(EventNames.typeName(EventType.ffStatus) == "EV_FF_STATUS")
        #expect(EventNames.type(named: "EV_ABS") == EventType.abs)
        #expect(EventNames.type(named: "EV_LED") == EventType.led)
        #expect(EventNames.type(named: "EV_NOPE") == nil)
        #expect(EventNames.type(named: "") == nil)
    }

    @Test func codeNamesBothWays() {
        #expect(EventNames.codeName(type: EventType.key, code: 30) == "KEY_A")
        #expect(EventNames.codeName(type: EventType.key, code: 0x110) == "BTN_LEFT")
        #expect(EventNames.codeName(type: EventType.rel, code: 8) == "REL_WHEEL")
        #expect(EventNames.codeName(type: EventType.abs, code: 0x35) == "ABS_MT_POSITION_X")
        #expect(EventNames.codeName(type: EventType.sw, code: 0) == "SW_LID")
        #expect(EventNames.codeName(type: EventType.syn, code: SynCode.dropped) == "SYN_DROPPED")

        #expect(EventNames.code(named: "KEY_A", type: EventType.key) == 30)
        #expect(EventNames.code(named: "KEY_A", type: EventType.rel) == nil)   // wrong type
        #expect(EventNames.code(named: "BTN_A", type: EventType.key) == 0x130) // alias of BTN_SOUTH
        let lid = EventNames.code(named: "SW_LID")
        #expect(lid?.type == EventType.sw && lid?.code == 0)
        let wheel = EventNames.code(named: "REL_WHEEL")
        #expect(wheel?.type == EventType.rel && wheel?.code == 8)
        #expect(EventNames.code(named: "KEY_NOPE") == nil)
    }

    @Test func unknownCodesFallBackToNumbers() {
        // 0x2fe lies below KEY_MAX but has no name.
        #expect(EventNames.codeName(type: EventType.key, code: 0x2fe) == nil)
        #expect(EventNames.codeText(type: EventType.key, code: 0x2fe) == "EV_KEY:0x2fe")
        // Beyond SW_MAX (0x10): not in the cached table at all.
        #expect(EventNames.codeText(type: EventType.sw, code: 0x100) == "EV_SW:0x100")
        // A type libevdev does not know, and its codes.
        #expect(EventNames.typeName(0x1c) == nil)
        #expect(EventNames.typeText(0x1c) == "EV_0x1c")
        #expect(EventNames.codeText(type: 0x1c, code: 5) == "EV_0x1c:0x5")
        #expect(EventNames.typeText(0x40) == "EV_0x40")

        #expect(EventNames.type(named: "EV_0x1c") == 0x1c)
        #expect(EventNames.type(named: "EV_0x40") == nil)          // beyond EV_MAX
        let parsed = EventNames.code(named: "EV_KEY:0x2fe")
        #expect(parsed?.type == EventType.key && parsed?.code == 0x2fe)
        #expect(EventNames.code(named: "EV_KEY:0x2fe", type: EventType.key) == 0x2fe)
        #expect(EventNames.code(named: "EV_KEY:0x2fe", type: EventType.rel) == nil)
        #expect(EventNames.code(named: "EV_KEY:zz") == nil)
        #expect(EventNames.code(named: "EV_NOPE:0x1") == nil)
    }

    @Test func everyTextRoundTrips() {
        for type in 0...EventType.max {
            #expect(EventNames.type(named: EventNames.typeText(type)) == type)
            guard let max = EventNames.maxCode(type: type) else { continue }
            for code in 0...max {
                let text = EventNames.codeText(type: type, code: code)
                let back = EventNames.code(named: text)
                #expect(back?.type == type && back?.code == code, "\(text)")
            }
        }
    }

    /// libevdev names EV_FF codes 0 and 1 "FF_STATUS_STOPPED" and "FF_STATUS_MAX", names that
    /// lead back to EV_FF_STATUS: they must not be used for EV_FF, or texts stop round-tripping.
    @Test func namesThatBelongToAnotherTypeAreDropped() {
        #expect(EventNames.codeName(type: EventType.ff, code: 0) == nil)
        #expect(EventNames.codeText(type: EventType.ff, code: 0) == "EV_FF:0x0")
        #expect(EventNames.codeName(type: EventType.ff, code: 0x50) == "FF_RUMBLE")
    }

    @Test func maxCodes() {
        #expect(EventNames.maxCode(type: EventType.key) == 0x2ff)
        #expect(EventNames.maxCode(type: EventType.sw) == 0x10)
        #expect(EventNames.maxCode(type: EventType.pwr) == nil)     // EV_PWR has no codes
        #expect(EventNames.maxCode(type: 0x1c) == nil)
    }

    @Test func propertiesBothWays() {
        #expect(EventNames.propertyName(1) == "INPUT_PROP_DIRECT")
        #expect(EventNames.propertyName(6) == "INPUT_PROP_ACCELEROMETER")
        #expect(EventNames.property(named: "INPUT_PROP_POINTING_STICK") == 5)
        #expect(EventNames.propertyName(0x1e) == nil)
        #expect(EventNames.propertyText(0x1e) == "INPUT_PROP_0x1e")
        #expect(EventNames.property(named: "INPUT_PROP_0x1e") == 0x1e)
        #expect(EventNames.property(named: "INPUT_PROP_0x40") == nil)
        #expect(EventNames.property(named: "INPUT_PROP_NOPE") == nil)
    }

    @Test func valueNames() {
        let absMTToolType: UInt16 = 0x37
        #expect(EventNames.valueName(type: EventType.abs, code: absMTToolType, value: 0) == "MT_TOOL_FINGER")
        #expect(EventNames.valueName(type: EventType.abs, code: absMTToolType, value: 1) == "MT_TOOL_PEN")
        #expect(EventNames.valueName(type: EventType.abs, code: absMTToolType, value: 1000) == nil)
        #expect(EventNames.valueName(type: EventType.abs, code: absMTToolType, value: -1) == nil)
        #expect(EventNames.valueName(type: EventType.key, code: 30, value: 1) == nil)
    }

    @Test func inputEventTexts() {
        let e = InputEvent(time: 0, type: EventType.key, code: 30, value: 1)
        #expect(e.typeText == "EV_KEY")
        #expect(e.codeText == "KEY_A")
    }

    /// The classifier keeps its codes as numbers; pin each to libevdev's name for it.
    @Test func classifierCodesMatchLibevdev() {
        typealias C = DeviceClassifier.Code
        let keys: [(UInt16, String)] = [
            (C.keyEsc, "KEY_ESC"), (C.keyS, "KEY_S"), (C.btnMisc, "BTN_0"), (C.btn0, "BTN_0"),
            (C.btnMouse, "BTN_LEFT"), (C.btnJoystick, "BTN_TRIGGER"), (C.btnDigi, "BTN_TOOL_PEN"),
            (C.btnToolPen, "BTN_TOOL_PEN"), (C.btnToolFinger, "BTN_TOOL_FINGER"),
            (C.btnTouch, "BTN_TOUCH"), (C.btnStylus, "BTN_STYLUS"), (C.keyOK, "KEY_OK"),
            (C.btnDpadUp, "BTN_DPAD_UP"), (C.btnDpadRight, "BTN_DPAD_RIGHT"),
            (C.keyALSToggle, "KEY_ALS_TOGGLE"), (C.btnTriggerHappy, "BTN_TRIGGER_HAPPY1"),
            (C.btnTriggerHappy1, "BTN_TRIGGER_HAPPY1"), (C.btnTriggerHappy40, "BTN_TRIGGER_HAPPY40"),
        ]
        for (code, name) in keys {
            #expect(EventNames.codeName(type: EventType.key, code: code) == name)
        }
        let rels: [(UInt16, String)] = [(C.relX, "REL_X"), (C.relY, "REL_Y"), (C.relHWheel, "REL_HWHEEL"),
                                        (C.relWheel, "REL_WHEEL")]
        for (code, name) in rels { #expect(EventNames.codeName(type: EventType.rel, code: code) == name) }
        let axes: [(UInt16, String)] = [(C.absX, "ABS_X"), (C.absY, "ABS_Y"), (C.absZ, "ABS_Z"),
                                        (C.absRX, "ABS_RX"), (C.absPressure, "ABS_PRESSURE"),
                                        (C.absMTSlot, "ABS_MT_SLOT"), (C.absMTPositionX, "ABS_MT_POSITION_X"),
                                        (C.absMTPositionY, "ABS_MT_POSITION_Y")]
        for (code, name) in axes { #expect(EventNames.codeName(type: EventType.abs, code: code) == name) }
        #expect(EventNames.propertyName(C.propDirect) == "INPUT_PROP_DIRECT")
        #expect(EventNames.propertyName(C.propPointingStick) == "INPUT_PROP_POINTING_STICK")
        #expect(EventNames.propertyName(C.propAccelerometer) == "INPUT_PROP_ACCELEROMETER")
    }
}

/// The name tables are libevdev's (issue #23 item 7: InputModel, and so evflowctl and
/// evflow-mqtt, no longer link libevdev): every forward and reverse lookup gives what libevdev
/// gives, for every type, code, property and named value, and every name the kernel headers
/// define. A libevdev with other names makes these fail: run scripts/event-names.
@Suite struct EventNamesMatchLibevdevTests {
    private func string(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }

    @Test func forwardLookupsAreLibevdevs() {
        for type in 0...EventType.max {
            #expect(EventNames.typeName(type) == string(libevdev_event_type_get_name(UInt32(type))), "type \(type)")
            let max = libevdev_event_type_get_max(UInt32(type))
            #expect(EventNames.maxCode(type: type) == (max >= 0 ? UInt16(max) : nil), "max of type \(type)")
            guard max >= 0 else { continue }
            for code in 0...UInt16(max) {
                var name = string(libevdev_event_code_get_name(UInt32(type), UInt32(code)))
                if let n = name, libevdev_event_type_from_code_name(n) != Int32(type)
                    || libevdev_event_code_from_code_name(n) != Int32(code) {
                    name = nil   // a name of another type's code (EV_FF's FF_STATUS_*)
                }
                #expect(EventNames.codeName(type: type, code: code) == name, "type \(type) code \(code)")
                for value in Int32(-1)...Int32(EventNames.valueTableSize) {
                    #expect(EventNames.valueName(type: type, code: code, value: value)
                        == string(libevdev_event_value_get_name(UInt32(type), UInt32(code), value)))
                }
            }
        }
        for property in UInt16(0)...0x1f {
            #expect(EventNames.propertyName(property) == string(libevdev_property_get_name(UInt32(property))))
        }
    }

    @Test func reverseLookupsAreLibevdevs() throws {
        var names: Set<String> = []
        for header in ["/usr/include/linux/input-event-codes.h", "/usr/include/linux/input.h"] {
            let text = try String(contentsOfFile: header, encoding: .utf8)
            for line in text.split(separator: "\n") where line.hasPrefix("#define ") {
                let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
                if fields.count >= 2 { names.insert(String(fields[1])) }
            }
        }
        names.formUnion(["", "KEY_NOPE", "EV_NOPE", "BTN_MOUSE", "INPUT_PROP_NOPE"])
        #expect(names.count > 700)
        for name in names {
            let type = libevdev_event_type_from_name(name)
            #expect(EventNames.type(named: name) == (type >= 0 ? UInt16(type) : nil), "\(name)")
            let codeType = libevdev_event_type_from_code_name(name)
            let code = libevdev_event_code_from_code_name(name)
            let both = EventNames.code(named: name)
            if codeType >= 0 && code >= 0 {
                #expect(both?.type == UInt16(codeType) && both?.code == UInt16(code), "\(name)")
            } else if !name.contains(":") {
                #expect(both == nil, "\(name)")
            }
            for t in [EventType.key, EventType.abs, EventType.sw, EventType.syn] {
                let n = libevdev_event_code_from_name(UInt32(t), name)
                #expect(EventNames.code(named: name, type: t) == (n >= 0 ? UInt16(n) : nil), "\(name) in type \(t)")
            }
            let property = libevdev_property_from_name(name)
            #expect(EventNames.property(named: name) == (property >= 0 ? UInt16(property) : nil), "\(name)")
        }
    }
}
