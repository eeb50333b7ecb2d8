/// `struct input_id`: bus type, vendor, product, version.
public struct InputID: Hashable, Sendable, Codable {
    public var bustype: UInt16
    public var vendor: UInt16
    public var product: UInt16
    public var version: UInt16

    /// Creates an id.
    public init(bustype: UInt16, vendor: UInt16, product: UInt16, version: UInt16) {
        self.bustype = bustype
        self.vendor = vendor
        self.product = product
        self.version = version
    }
}

/// `struct input_absinfo` for one absolute axis.
public struct AbsInfo: Hashable, Sendable, Codable {
    public var value: Int32
    public var minimum: Int32
    public var maximum: Int32
    public var fuzz: Int32
    public var flat: Int32
    public var resolution: Int32

    /// Creates axis information.
    public init(value: Int32 = 0, minimum: Int32, maximum: Int32, fuzz: Int32 = 0, flat: Int32 = 0,
                resolution: Int32 = 0) {
        self.value = value
        self.minimum = minimum
        self.maximum = maximum
        self.fuzz = fuzz
        self.flat = flat
        self.resolution = resolution
    }

    /// What makes this axis impossible, or nil: a minimum above the maximum (the kernel
    /// refuses such an axis from uinput), or a negative fuzz, flat or resolution. Readers of
    /// recordings refuse such an axis, naming its line.
    public var problem: String? {
        if minimum > maximum { return "minimum \(minimum) above maximum \(maximum)" }
        if fuzz < 0 { return "negative fuzz \(fuzz)" }
        if flat < 0 { return "negative flat \(flat)" }
        if resolution < 0 { return "negative resolution \(resolution)" }
        return nil
    }
}

/// The udev input classes (`ID_INPUT_*` properties) evflow knows about.
public enum DeviceClass: String, Hashable, Sendable, Codable, CaseIterable, Comparable {
    case keyboard, key, mouse, pointingstick, touchpad, touchscreen, tablet, tabletPad = "tablet_pad"
    case joystick, `switch`, accelerometer

    /// The udev property that marks this class, e.g. `ID_INPUT_KEYBOARD`.
    public var udevProperty: String { "ID_INPUT_" + rawValue.uppercased() }

    public static func < (a: DeviceClass, b: DeviceClass) -> Bool { a.rawValue < b.rawValue }
}

/// What a device is: identity, udev classes and capabilities.
public struct DeviceInfo: Hashable, Sendable, Codable {
    /// Stable identifier that survives re-plugging the same device (see `DeviceID`).
    public var id: DeviceID
    /// Device name as reported by the kernel (`EVIOCGNAME`).
    public var name: String
    /// Bus, vendor, product, version.
    public var inputID: InputID
    /// Physical path (`EVIOCGPHYS`), if any.
    public var phys: String?
    /// Unique identifier (`EVIOCGUNIQ`, often a serial number), if any.
    public var uniq: String?
    /// Device node (`/dev/input/eventN`) when live; nil for recordings.
    public var devnode: String?
    /// udev classes (`ID_INPUT_KEYBOARD=1` ...). For recordings, derived from capabilities.
    public var classes: Set<DeviceClass>
    /// Other udev properties worth keeping (`ID_VENDOR_ID`, `ID_PATH`, ...).
    public var properties: [String: String]
    /// Supported codes per event type (`EV_KEY` → key codes, ...).
    public var capabilities: [UInt16: Set<UInt16>]
    /// Axis information per `ABS_*` code.
    public var absInfo: [UInt16: AbsInfo]
    /// `INPUT_PROP_*` bits set on the device.
    public var inputProperties: Set<UInt16>
    /// What evflowd does with the device besides reading it (`output`: mode, twin, grab), as
    /// DEVICES and STATE report it (protocol 1.3); nil in a source's description.
    public var output: DeviceOutputStatus? = nil
    /// The gestures evflowd computes for the device's keys (`gestures`, protocol 1.5; docs/gestures.md),
    /// as DEVICES and STATE report them; nil in a source's description and for a device without any.
    public var gestures: DeviceGestures? = nil
    /// The device's own battery (`battery`, protocol 1.8; docs/protocol.md, "Batteries"), as
    /// DEVICES and STATE report it; nil in a source's description and for a device without one.
    public var battery: DeviceBattery? = nil

    /// Creates a description; `id` defaults to the stable id derived from the identity fields.
    public init(name: String, inputID: InputID, phys: String? = nil, uniq: String? = nil,
                devnode: String? = nil, classes: Set<DeviceClass> = [], properties: [String: String] = [:],
                capabilities: [UInt16: Set<UInt16>] = [:], absInfo: [UInt16: AbsInfo] = [:],
                inputProperties: Set<UInt16> = [], id: DeviceID? = nil) {
        self.name = name
        self.inputID = inputID
        self.phys = phys
        self.uniq = uniq
        self.devnode = devnode
        self.classes = classes
        self.properties = properties
        self.capabilities = capabilities
        self.absInfo = absInfo
        self.inputProperties = inputProperties
        self.id = id ?? DeviceID(name: name, inputID: inputID, phys: phys, uniq: uniq)
    }

    /// Whether the device reports `type`/`code`.
    public func supports(type: UInt16, code: UInt16) -> Bool {
        capabilities[type]?.contains(code) ?? false
    }

    /// The prefixes of the udev property names kept in `properties` of a live device; the
    /// rest (`SEQNUM`, `MAJOR`, `TAGS`, ...) is bookkeeping.
    public static let keptUdevPropertyPrefixes = ["ID_", "LIBINPUT_", "EVDEV_ABS_", "MOUSE_", "KEYBOARD_", "POINTINGSTICK_"]

    /// Whether a live device keeps the udev property `name` in `properties`: it starts with one
    /// of `keptUdevPropertyPrefixes` and is not a class flag (`ID_INPUT`, `ID_INPUT_KEYBOARD`,
    /// ...), which becomes `classes` instead.
    public static func keepsUdevProperty(_ name: String) -> Bool {
        !udevClassFlags.contains(name) && keptUdevPropertyPrefixes.contains { name.hasPrefix($0) }
    }

    /// `ID_INPUT` and every class's `ID_INPUT_<CLASS>`.
    public static let udevClassFlags: Set<String> = Set(DeviceClass.allCases.map(\.udevProperty) + ["ID_INPUT"])
}

/// A device identifier that is the same every time the same device is plugged in.
///
/// Derived from what the hardware reports (bus/vendor/product/version, name, uniq, phys), not
/// from the event node number, which the kernel reassigns on every plug. The text form is
/// `bus:vendor:product-hash`, e.g. `0003:17ef:6047-1f2e3d4c`, readable and short enough to type.
/// Devices that report the same identity get `#2`, `#3`... after it (`distinct(isTaken:)`);
/// a session recording may name its devices with any printable text.
public struct DeviceID: Hashable, Sendable, Codable, CustomStringConvertible, Comparable {
    /// The text form.
    public let rawValue: String

    /// Wraps an existing id string.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Derives the id from the identity fields (FNV-1a 32-bit over name, phys and uniq).
    public init(name: String, inputID: InputID, phys: String?, uniq: String?) {
        var hash: UInt32 = 0x811c_9dc5
        for part in [name, phys ?? "", uniq ?? "", String(inputID.version)] {
            for byte in part.utf8 {
                hash = (hash ^ UInt32(byte)) &* 0x0100_0193
            }
            hash = (hash ^ 0xff) &* 0x0100_0193   // separator, so ("ab","c") != ("a","bc")
        }
        func hex4(_ v: UInt16) -> String {
            let s = String(v, radix: 16)
            return String(repeating: "0", count: 4 - s.count) + s
        }
        let h = String(hash, radix: 16)
        rawValue = "\(hex4(inputID.bustype)):\(hex4(inputID.vendor)):\(hex4(inputID.product))-"
            + String(repeating: "0", count: 8 - h.count) + h
    }

    /// The id a device whose own id is `self` goes by among devices that hold ids already —
    /// the one rule for live devices (the hub, among the devices present) and replays (among
    /// the replay's earlier devices): `self` when `isTaken` says it is free, otherwise the
    /// first free of `self#2`, `self#3`, ... Two identical devices (same name, phys, uniq and
    /// version, e.g. two uinput keyboards) therefore get `X` and `X#2` in order of appearance,
    /// and a device that comes back while its twin stays takes back the id it had, the lowest
    /// free one (docs/protocol.md §3).
    public func distinct(isTaken: (DeviceID) -> Bool) -> DeviceID {
        guard isTaken(self) else { return self }
        var n = 2
        while true {
            let candidate = DeviceID(rawValue: rawValue + "#\(n)")
            if !isTaken(candidate) { return candidate }
            n += 1
        }
    }

    public var description: String { rawValue }
    public static func < (a: DeviceID, b: DeviceID) -> Bool { a.rawValue < b.rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(String.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }
}

/// A device appearing or disappearing.
public enum DeviceChange: Hashable, Sendable {
    /// The device appeared and is being read.
    case added(DeviceInfo)
    /// The device went away.
    case removed(DeviceInfo)
    /// The device appeared but could not be opened (e.g. permissions never arrived); it is
    /// reported, not dropped silently. A later `removed` ends it.
    case inaccessible(DeviceInfo, reason: String)

    /// The device concerned.
    public var device: DeviceInfo {
        switch self {
        case .added(let d), .removed(let d), .inaccessible(let d, _): return d
        }
    }
}
