/// Derives udev's input classes (`ID_INPUT_*`) from a device's capabilities and properties.
///
/// Live devices get their classes from udev. Recordings have no udev, so they are classified
/// here with the rules of udev's `input_id` builtin (systemd 252, the version Debian 12 ships),
/// so that a replayed device lands in the same filter class as the live one did:
///
/// - **accelerometer**: `INPUT_PROP_ACCELEROMETER`, or ABS_X/Y/Z without any `EV_KEY`. Such a
///   device gets no other pointer class.
/// - **pointingstick**: `INPUT_PROP_POINTING_STICK`, or a mouse on the I²C bus.
/// - With ABS_X+ABS_Y (checked in this order, first match wins): **tablet** (BTN_STYLUS or
///   BTN_TOOL_PEN), **touchpad** (BTN_TOOL_FINGER, no pen, not `INPUT_PROP_DIRECT`),
///   **mouse** (a mouse button: absolute mice such as VMware's), **touchscreen** (BTN_TOUCH or
///   `INPUT_PROP_DIRECT`), **joystick** (joystick buttons or axes). Without ABS_X+ABS_Y,
///   joystick buttons or axes alone make a **joystick**.
/// - With ABS_MT_POSITION_X+Y (unless the device claims every axis up to ABS_MT_SLOT, a sign
///   of bogus descriptors): tablet, touchpad or touchscreen by the same tests.
/// - **tablet_pad**: a tablet that also has BTN_0 and BTN_STYLUS but not BTN_TOOL_PEN.
/// - **mouse**: a mouse button (BTN_MOUSE..BTN_JOYSTICK-1) and REL_X+REL_Y (or no absolute
///   axes), unless already a tablet, touchpad or joystick.
/// - **key**: any code below BTN_MISC, or in KEY_OK..BTN_DPAD_UP-1, KEY_ALS_TOGGLE..
///   BTN_TRIGGER_HAPPY-1; also a device that is nothing else but has a scroll wheel.
/// - **keyboard**: every code KEY_ESC..KEY_S (1...31): Esc, the digit row, Q..P, A, S.
/// - **switch**: any `EV_SW`.
///
/// A type counts as supported when `capabilities` has an entry for it (even an empty one).
public enum DeviceClassifier {
    /// The classes of a device from its capabilities, input properties and bus.
    public static func classes(capabilities: [UInt16: Set<UInt16>], inputProperties: Set<UInt16>,
                               bustype: UInt16 = 0) -> Set<DeviceClass> {
        let c = Capabilities(capabilities: capabilities, properties: inputProperties)
        var result = pointerClasses(c, bustype: bustype)
        let isPointer = !result.isEmpty
        let keyClasses = self.keyClasses(c)
        result.formUnion(keyClasses)
        // Some event nodes have only a scroll wheel; udev calls them keys.
        if !isPointer && keyClasses.isEmpty && c.has(EventType.rel)
            && (c.rel(Code.relWheel) || c.rel(Code.relHWheel)) {
            result.insert(.key)
        }
        if c.has(EventType.sw) { result.insert(.switch) }
        return result
    }

    /// The classes of a described device, from its capabilities, properties and bus type.
    public static func classes(of device: DeviceInfo) -> Set<DeviceClass> {
        classes(capabilities: device.capabilities, inputProperties: device.inputProperties,
                bustype: device.inputID.bustype)
    }

    // MARK: Rules

    private static func pointerClasses(_ c: Capabilities, bustype: UInt16) -> Set<DeviceClass> {
        let hasKeys = c.has(EventType.key)
        let hasAbsCoordinates = c.abs(Code.absX) && c.abs(Code.absY)
        if c.prop(Code.propAccelerometer) || (!hasKeys && hasAbsCoordinates && c.abs(Code.absZ)) {
            return [.accelerometer]
        }

        var isPointingStick = c.prop(Code.propPointingStick)
        let hasStylus = c.key(Code.btnStylus)
        let hasPen = c.key(Code.btnToolPen)
        let fingerButNoPen = c.key(Code.btnToolFinger) && !hasPen
        let hasMouseButton = c.anyKey(in: Code.btnMouse..<Code.btnJoystick)
        let hasRelCoordinates = c.has(EventType.rel) && c.rel(Code.relX) && c.rel(Code.relY)
        var hasMTCoordinates = c.abs(Code.absMTPositionX) && c.abs(Code.absMTPositionY)
        // Devices that claim every axis up to ABS_MT_SLOT have broken descriptors, not MT.
        if hasMTCoordinates && c.abs(Code.absMTSlot) && c.abs(Code.absMTSlot - 1) {
            hasMTCoordinates = false
        }
        let isDirect = c.prop(Code.propDirect)
        let hasTouch = c.key(Code.btnTouch)
        let hasPadButtons = c.key(Code.btn0) && hasStylus && !hasPen

        // Joysticks need not have buttons (pedals) nor axes. A mouse with more than 16 buttons
        // runs into the joystick range: BTN_JOYSTICK - 1 set means it is such a mouse.
        var hasJoystickAxesOrButtons = false
        if !c.key(Code.btnJoystick - 1) {
            hasJoystickAxesOrButtons = c.anyKey(in: Code.btnJoystick..<Code.btnDigi)
                || c.anyKey(in: Code.btnTriggerHappy1..<(Code.btnTriggerHappy40 + 1))
                || c.anyKey(in: Code.btnDpadUp..<(Code.btnDpadRight + 1))
        }
        hasJoystickAxesOrButtons = hasJoystickAxesOrButtons || c.anyAbs(in: Code.absRX..<Code.absPressure)

        var isTablet = false, isTouchpad = false, isTouchscreen = false, isJoystick = false
        var isMouse = false, isAbsMouse = false
        if hasAbsCoordinates {
            if hasStylus || hasPen { isTablet = true }
            else if fingerButNoPen && !isDirect { isTouchpad = true }
            else if hasMouseButton { isAbsMouse = true }
            else if hasTouch || isDirect { isTouchscreen = true }
            else if hasJoystickAxesOrButtons { isJoystick = true }
        } else if hasJoystickAxesOrButtons {
            isJoystick = true
        }
        if hasMTCoordinates {
            if hasStylus || hasPen { isTablet = true }
            else if fingerButNoPen && !isDirect { isTouchpad = true }
            else if hasTouch || isDirect { isTouchscreen = true }
        }
        let isTabletPad = isTablet && hasPadButtons
        if !isTablet && !isTouchpad && !isJoystick && hasMouseButton
            && (hasRelCoordinates || !hasAbsCoordinates) {
            isMouse = true
        }
        // There is no such thing as an I²C mouse.
        if isMouse && bustype == Code.busI2C { isPointingStick = true }

        var result: Set<DeviceClass> = []
        if isPointingStick { result.insert(.pointingstick) }
        if isMouse || isAbsMouse { result.insert(.mouse) }
        if isTouchpad { result.insert(.touchpad) }
        if isTouchscreen { result.insert(.touchscreen) }
        if isJoystick { result.insert(.joystick) }
        if isTablet { result.insert(.tablet) }
        if isTabletPad { result.insert(.tabletPad) }
        return result
    }

    private static func keyClasses(_ c: Capabilities) -> Set<DeviceClass> {
        guard c.has(EventType.key) else { return [] }
        var result: Set<DeviceClass> = []
        // Keys, not buttons: anything below BTN_MISC, else the two high key blocks.
        let lowKeys = c.anyKey(in: 0..<Code.btnMisc)
        if lowKeys || c.anyKey(in: Code.keyOK..<Code.btnDpadUp)
            || c.anyKey(in: Code.keyALSToggle..<Code.btnTriggerHappy) {
            result.insert(.key)
        }
        // Bits 1...31 of the key mask: Esc, 1..0, -, =, Backspace, Tab, Q..P, [, ], Enter,
        // Left Ctrl, A, S. udev's "full keyboard" test.
        if (Code.keyEsc...Code.keyS).allSatisfy(c.key) {
            result.insert(.keyboard)
        }
        return result
    }

    // MARK: Codes

    /// The `linux/input-event-codes.h` numbers the rules use. Kept here rather than asked of
    /// libevdev on every call; a test checks each against libevdev's name table.
    enum Code {
        static let keyEsc: UInt16 = 0x01
        static let keyS: UInt16 = 0x1f
        static let btnMisc: UInt16 = 0x100
        static let btn0: UInt16 = 0x100
        static let btnMouse: UInt16 = 0x110
        static let btnJoystick: UInt16 = 0x120
        static let btnDigi: UInt16 = 0x140
        static let btnToolPen: UInt16 = 0x140
        static let btnToolFinger: UInt16 = 0x145
        static let btnTouch: UInt16 = 0x14a
        static let btnStylus: UInt16 = 0x14b
        static let keyOK: UInt16 = 0x160
        static let btnDpadUp: UInt16 = 0x220
        static let btnDpadRight: UInt16 = 0x223
        static let keyALSToggle: UInt16 = 0x230
        static let btnTriggerHappy: UInt16 = 0x2c0
        static let btnTriggerHappy1: UInt16 = 0x2c0
        static let btnTriggerHappy40: UInt16 = 0x2e7
        static let relX: UInt16 = 0x00
        static let relY: UInt16 = 0x01
        static let relHWheel: UInt16 = 0x06
        static let relWheel: UInt16 = 0x08
        static let absX: UInt16 = 0x00
        static let absY: UInt16 = 0x01
        static let absZ: UInt16 = 0x02
        static let absRX: UInt16 = 0x03
        static let absPressure: UInt16 = 0x18
        static let absMTSlot: UInt16 = 0x2f
        static let absMTPositionX: UInt16 = 0x35
        static let absMTPositionY: UInt16 = 0x36
        static let propDirect: UInt16 = 0x01
        static let propPointingStick: UInt16 = 0x05
        static let propAccelerometer: UInt16 = 0x06
        static let busI2C: UInt16 = 0x18
    }

    /// Read-only view of the capability sets with the tests the rules need.
    private struct Capabilities {
        let capabilities: [UInt16: Set<UInt16>]
        let properties: Set<UInt16>
        let keys: Set<UInt16>
        let axes: Set<UInt16>
        let rels: Set<UInt16>

        init(capabilities: [UInt16: Set<UInt16>], properties: Set<UInt16>) {
            self.capabilities = capabilities
            self.properties = properties
            keys = capabilities[EventType.key] ?? []
            axes = capabilities[EventType.abs] ?? []
            rels = capabilities[EventType.rel] ?? []
        }

        func has(_ type: UInt16) -> Bool { capabilities[type] != nil }
        func key(_ code: UInt16) -> Bool { keys.contains(code) }
        func abs(_ code: UInt16) -> Bool { axes.contains(code) }
        func rel(_ code: UInt16) -> Bool { rels.contains(code) }
        func prop(_ bit: UInt16) -> Bool { properties.contains(bit) }
        func anyKey(in range: Range<UInt16>) -> Bool { keys.contains(where: range.contains) }
        func anyAbs(in range: Range<UInt16>) -> Bool { axes.contains(where: range.contains) }
    }
}
