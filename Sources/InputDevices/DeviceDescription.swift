import InputModel

/// What libevdev reports about an open device, as plain values (testable without a device).
public struct EvdevSnapshot: Hashable, Sendable {
    /// `EVIOCGNAME`.
    public var name: String
    /// `EVIOCGID`.
    public var inputID: InputID
    /// `EVIOCGPHYS`, nil when empty.
    public var phys: String?
    /// `EVIOCGUNIQ`, nil when empty.
    public var uniq: String?
    /// Codes per event type.
    public var capabilities: [UInt16: Set<UInt16>]
    /// Axis information per `ABS_*` code.
    public var absInfo: [UInt16: AbsInfo]
    /// `INPUT_PROP_*` bits.
    public var inputProperties: Set<UInt16>

    /// Creates a snapshot.
    public init(name: String, inputID: InputID, phys: String? = nil, uniq: String? = nil,
                capabilities: [UInt16: Set<UInt16>] = [:], absInfo: [UInt16: AbsInfo] = [:],
                inputProperties: Set<UInt16> = []) {
        self.name = name
        self.inputID = inputID
        self.phys = phys
        self.uniq = uniq
        self.capabilities = capabilities
        self.absInfo = absInfo
        self.inputProperties = inputProperties
    }
}

/// Builds `DeviceInfo` from udev data (before the node is opened) and refines it with
/// libevdev's answers once it is.
public enum DeviceDescription {
    /// The udev classes marked `ID_INPUT_<CLASS>=1`.
    public static func classes(fromUdev properties: [String: String]) -> Set<DeviceClass> {
        var result: Set<DeviceClass> = []
        for c in DeviceClass.allCases where properties[c.udevProperty] == "1" {
            result.insert(c)
        }
        return result
    }

    /// The udev properties kept in `DeviceInfo.properties` (`DeviceInfo.keepsUdevProperty`:
    /// the class flags become `classes`, bookkeeping is dropped). Configuration `match` rules
    /// may name only these.
    public static func keptProperties(_ properties: [String: String]) -> [String: String] {
        properties.filter { key, _ in DeviceInfo.keepsUdevProperty(key) }
    }

    /// A description from udev alone: properties of the `eventN` device and the sysfs
    /// attributes of its `inputN` parent (`name`, `phys`, `uniq`, `id/bustype` ... in hex).
    /// Used to filter before opening and to report a device that cannot be opened.
    ///
    /// `parentProperties` are the udev properties of the `inputN` parent as its own uevent
    /// carried them (`NAME`, `PHYS`, `UNIQ`, `PRODUCT=bus/vendor/product/version` in hex): the
    /// fallback when sysfs is already gone because the device vanished before udev finished.
    public static func fromUdev(properties: [String: String], parentAttributes: [String: String],
                                parentProperties: [String: String] = [:], devnode: String?) -> DeviceInfo {
        var attributes = parentAttributes
        if attributes["name"] == nil, let name = parentProperties["NAME"] { attributes["name"] = unquoted(name) }
        if attributes["phys"] == nil, let phys = parentProperties["PHYS"] { attributes["phys"] = unquoted(phys) }
        if attributes["uniq"] == nil, let uniq = parentProperties["UNIQ"] { attributes["uniq"] = unquoted(uniq) }
        if attributes["id/bustype"] == nil, let product = parentProperties["PRODUCT"] {
            let parts = product.split(separator: "/").map(String.init)
            if parts.count == 4 {
                for (key, value) in zip(["id/bustype", "id/vendor", "id/product", "id/version"], parts) {
                    attributes[key] = value
                }
            }
        }
        return fromUdev(properties: properties, attributes: attributes, devnode: devnode)
    }

    private static func fromUdev(properties: [String: String], attributes parentAttributes: [String: String],
                                 devnode: String?) -> DeviceInfo {
        func hex(_ key: String) -> UInt16 {
            UInt16(parentAttributes[key]?.trimmingWhitespace() ?? "", radix: 16) ?? 0
        }
        // udev's NAME is quoted ("\"AT Translated Set 2 keyboard\""); sysfs is not.
        let name = parentAttributes["name"]?.trimmingWhitespace()
            ?? properties["NAME"].map(unquoted) ?? ""
        let inputID = InputID(bustype: hex("id/bustype"), vendor: hex("id/vendor"),
                              product: hex("id/product"), version: hex("id/version"))
        return DeviceInfo(name: name, inputID: inputID,
                          phys: nonEmpty(parentAttributes["phys"]?.trimmingWhitespace() ?? properties["PHYS"].map(unquoted)),
                          uniq: nonEmpty(parentAttributes["uniq"]?.trimmingWhitespace() ?? properties["UNIQ"].map(unquoted)),
                          devnode: devnode, classes: classes(fromUdev: properties),
                          properties: keptProperties(properties))
    }

    /// `udevInfo` refined with what libevdev reports. Classes stay udev's; only when udev gave
    /// none (no `ID_INPUT` at all, e.g. udev not running) are they derived from capabilities.
    public static func refined(_ udevInfo: DeviceInfo, with evdev: EvdevSnapshot,
                               udevProperties: [String: String]) -> DeviceInfo {
        var classes = udevInfo.classes
        if classes.isEmpty && udevProperties["ID_INPUT"] == nil {
            classes = DeviceClassifier.classes(capabilities: evdev.capabilities, inputProperties: evdev.inputProperties,
                                               bustype: evdev.inputID.bustype)
        }
        return DeviceInfo(name: evdev.name, inputID: evdev.inputID, phys: evdev.phys, uniq: evdev.uniq,
                          devnode: udevInfo.devnode, classes: classes, properties: udevInfo.properties,
                          capabilities: evdev.capabilities, absInfo: evdev.absInfo,
                          inputProperties: evdev.inputProperties)
    }

    static func unquoted(_ s: String) -> String {
        var t = s.trimmingWhitespace()
        if t.count >= 2 && t.hasPrefix("\"") && t.hasSuffix("\"") {
            t = String(t.dropFirst().dropLast())
        }
        return t
    }

    static func nonEmpty(_ s: String?) -> String? {
        guard let s, !s.isEmpty else { return nil }
        return s
    }
}

extension String {
    func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        let last = scalars.lastIndex(where: { !$0.properties.isWhitespace })!
        return String(scalars[first...last])
    }
}
