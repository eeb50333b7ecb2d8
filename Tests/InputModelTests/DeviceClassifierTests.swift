import Testing
import InputModel

/// Capability sets modelled on real devices (evemu-describe output); expectations are what
/// udev's input_id builtin (systemd 252) sets for them.
@Suite struct DeviceClassifierTests {
    // Codes from linux/input-event-codes.h, named for readability.
    static let btnLeft: UInt16 = 0x110, btnRight: UInt16 = 0x111, btnMiddle: UInt16 = 0x112
    static let btnTrigger: UInt16 = 0x120, btnThumb: UInt16 = 0x121, btnSouth: UInt16 = 0x130
    static let btnEast: UInt16 = 0x131, btnToolPen: UInt16 = 0x140, btnToolRubber: UInt16 = 0x141
    static let btnToolFinger: UInt16 = 0x145, btnTouch: UInt16 = 0x14a, btnStylus: UInt16 = 0x14b
    static let btnToolDoubleTap: UInt16 = 0x14d, btn0: UInt16 = 0x100, btn1: UInt16 = 0x101
    static let absX: UInt16 = 0, absY: UInt16 = 1, absZ: UInt16 = 2, absRX: UInt16 = 3, absRY: UInt16 = 4
    static let absRZ: UInt16 = 5, absHat0X: UInt16 = 0x10, absPressure: UInt16 = 0x18
    static let absMTSlot: UInt16 = 0x2f, absMTX: UInt16 = 0x35, absMTY: UInt16 = 0x36, absMTTracking: UInt16 = 0x39
    static let relX: UInt16 = 0, relY: UInt16 = 1, relWheel: UInt16 = 8, relHWheel: UInt16 = 6
    static let propPointer: UInt16 = 0, propDirect: UInt16 = 1, propButtonpad: UInt16 = 2
    static let propPointingStick: UInt16 = 5, propAccelerometer: UInt16 = 6
    static let keyPower: UInt16 = 116, swLid: UInt16 = 0, ledNumLock: UInt16 = 0
    static let multitouch: Set<UInt16> = [absMTSlot, absMTX, absMTY, absMTTracking]

    func classes(_ caps: [UInt16: Set<UInt16>], props: Set<UInt16> = [], bus: UInt16 = 3) -> Set<DeviceClass> {
        DeviceClassifier.classes(capabilities: caps, inputProperties: props, bustype: bus)
    }

    typealias T = Self

    @Test func keyboard() {
        let caps: [UInt16: Set<UInt16>] = [EventType.syn: [0], EventType.key: Set(1...248),
                                           EventType.msc: [4], EventType.led: [0, 1, 2],
                                           EventType.rep: []]
        #expect(classes(caps) == [.key, .keyboard])
    }

    @Test func keyboardNeedsTheWholeFirstBlock() {
        // A numeric keypad has keys but not Esc..S.
        let keypad: Set<UInt16> = [69, 71, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 96, 98, 55]
        #expect(classes([EventType.key: keypad]) == [.key])
        var almost = Set<UInt16>(1...31); almost.remove(16)   // no KEY_Q
        #expect(classes([EventType.key: almost]) == [.key])
    }

    @Test func powerButtonIsKeyOnly() {
        #expect(classes([EventType.key: [T.keyPower]], bus: 0x19) == [.key])
    }

    @Test func mouse() {
        let caps: [UInt16: Set<UInt16>] = [EventType.key: [T.btnLeft, T.btnRight, T.btnMiddle],
                                           EventType.rel: [T.relX, T.relY, T.relWheel],
                                           EventType.msc: [4]]
        #expect(classes(caps) == [.mouse])
    }

    @Test func mouseOnI2CIsAPointingStick() {
        let caps: [UInt16: Set<UInt16>] = [EventType.key: [T.btnLeft, T.btnRight],
                                           EventType.rel: [T.relX, T.relY]]
        #expect(classes(caps, bus: 0x18) == [.mouse, .pointingstick])
    }

    @Test func pointingStickProperty() {
        let caps: [UInt16: Set<UInt16>] = [EventType.key: [T.btnLeft, T.btnRight, T.btnMiddle],
                                           EventType.rel: [T.relX, T.relY]]
        #expect(classes(caps, props: [T.propPointer, T.propPointingStick], bus: 0x11) == [.mouse, .pointingstick])
    }

    @Test func absoluteMouseLikeVMware() {
        let caps: [UInt16: Set<UInt16>] = [EventType.key: [T.btnLeft, T.btnRight],
                                           EventType.abs: [T.absX, T.absY]]
        #expect(classes(caps) == [.mouse])
    }

    @Test func mouseWithManyButtonsIsNotAJoystick() {
        // 0x110...0x127 runs through BTN_JOYSTICK - 1 into the joystick range.
        let caps: [UInt16: Set<UInt16>] = [EventType.key: Set(0x110...0x127),
                                           EventType.rel: [T.relX, T.relY, T.relWheel]]
        #expect(classes(caps) == [.mouse])
    }

    @Test func touchpad() {
        let caps: [UInt16: Set<UInt16>] = [
            EventType.key: [T.btnLeft, T.btnToolFinger, T.btnTouch, T.btnToolDoubleTap],
            EventType.abs: Set([T.absX, T.absY, T.absPressure]).union(T.multitouch),
        ]
        #expect(classes(caps, props: [T.propPointer, T.propButtonpad], bus: 0x18) == [.touchpad])
    }

    @Test func touchscreenWithDirectProperty() {
        let caps: [UInt16: Set<UInt16>] = [EventType.key: [T.btnTouch],
                                           EventType.abs: Set([T.absX, T.absY]).union(T.multitouch)]
        #expect(classes(caps, props: [T.propDirect]) == [.touchscreen])
        // A finger tool on a direct device is still a touchscreen, not a touchpad.
        var withFinger = caps
        withFinger[EventType.key]?.insert(T.btnToolFinger)
        #expect(classes(withFinger, props: [T.propDirect]) == [.touchscreen])
        // Without INPUT_PROP_DIRECT the finger tool makes it a touchpad.
        #expect(classes(withFinger) == [.touchpad])
    }

    @Test func multitouchOnlyTouchscreen() {
        let caps: [UInt16: Set<UInt16>] = [EventType.key: [T.btnTouch], EventType.abs: T.multitouch]
        #expect(classes(caps, props: [T.propDirect]) == [.touchscreen])
    }

    @Test func tabletPen() {
        let caps: [UInt16: Set<UInt16>] = [
            EventType.key: [T.btnToolPen, T.btnToolRubber, T.btnTouch, T.btnStylus, 0x14c],
            EventType.abs: [T.absX, T.absY, T.absPressure, 0x1a, 0x1b],
            EventType.msc: [0],
        ]
        #expect(classes(caps, props: [T.propPointer]) == [.tablet])
    }

    @Test func tabletPad() {
        let caps: [UInt16: Set<UInt16>] = [EventType.key: [T.btn0, T.btn1, T.btnStylus],
                                           EventType.abs: [T.absX, T.absY, 0x28]]
        #expect(classes(caps) == [.tablet, .tabletPad])
    }

    @Test func switchOnly() {
        #expect(classes([EventType.sw: [T.swLid]], bus: 0x19) == [.switch])
    }

    @Test func keyboardWithSwitch() {
        let caps: [UInt16: Set<UInt16>] = [EventType.key: Set(1...120), EventType.sw: [T.swLid]]
        #expect(classes(caps) == [.key, .keyboard, .switch])
    }

    @Test func gamepad() {
        let caps: [UInt16: Set<UInt16>] = [
            EventType.key: Set([T.btnSouth, T.btnEast, 0x133, 0x134, 0x136, 0x137, 0x13a, 0x13b, 0x13c]),
            EventType.abs: [T.absX, T.absY, T.absZ, T.absRX, T.absRY, T.absRZ, T.absHat0X, 0x11],
            EventType.ff: [0x50, 0x51],
        ]
        #expect(classes(caps) == [.joystick])
    }

    @Test func joystickWithTrigger() {
        let caps: [UInt16: Set<UInt16>] = [EventType.key: [T.btnTrigger, T.btnThumb],
                                           EventType.abs: [T.absX, T.absY]]
        #expect(classes(caps) == [.joystick])
    }

    @Test func buttonlessPedals() {
        // Rudder pedals: joystick axes only (ABS_RZ here), no buttons, no ABS_X/Y.
        #expect(classes([EventType.abs: [T.absRZ, 0x07]]) == [.joystick])
    }

    @Test func accelerometer() {
        #expect(classes([EventType.abs: [T.absX, T.absY, T.absZ]], bus: 0x18) == [.accelerometer])
        // With the property, even keys do not make it anything else.
        let caps: [UInt16: Set<UInt16>] = [EventType.key: [T.btnLeft],
                                           EventType.abs: [T.absX, T.absY, T.absZ]]
        #expect(classes(caps, props: [T.propAccelerometer]) == [.accelerometer])
        // Without the property, keys make ABS_X/Y/Z something else (here: an absolute mouse).
        #expect(classes(caps) == [.mouse])
    }

    @Test func scrollWheelOnlyIsKey() {
        #expect(classes([EventType.rel: [T.relWheel, T.relHWheel]]) == [.key])
        #expect(classes([EventType.rel: [T.relHWheel]]) == [.key])
    }

    @Test func nothingKnown() {
        #expect(classes([:]) == [])
        #expect(classes([EventType.msc: [4]]) == [])
        #expect(classes([EventType.rel: [T.relX, T.relY]]) == [])   // motion without a button
    }

    @Test func classesOfDeviceInfo() {
        let info = DeviceInfo(name: "i2c mouse", inputID: InputID(bustype: 0x18, vendor: 1, product: 2, version: 1),
                              capabilities: [EventType.key: [T.btnLeft], EventType.rel: [T.relX, T.relY]])
        #expect(DeviceClassifier.classes(of: info) == [.mouse, .pointingstick])
    }
}
