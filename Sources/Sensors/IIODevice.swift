import InputModel
#if canImport(Glibc)
import Glibc
#endif

/// An IIO device as its sysfs directory describes it (Documentation/ABI/testing/sysfs-bus-iio):
/// the channels evflow can read, how to convert them, its buffer's scan elements and its
/// trigger. Read from a directory path, so tests describe devices with directory trees.
public struct IIODevice: Hashable, Sendable {
    /// A channel read by polling: its `_input` (processed) or `_raw` attribute.
    public struct PolledChannel: Hashable, Sendable {
        /// `accel_x`, `illuminance`.
        public var channel: SensorChannel
        /// The attribute read: `in_accel_x_raw`, `in_illuminance_input`.
        public var attribute: String
        /// To physical units: `_scale` and `_offset` apply to `_raw` only (`_input` is
        /// processed by the driver).
        public var conversion: ChannelConversion
    }

    /// A scan element of the buffer, enabled or not.
    public struct ScanElement: Hashable, Sendable {
        /// The channel (nil for the timestamp and for quantities evflow does not read).
        public var channel: SensorChannel?
        /// As the layout needs it.
        public var element: ScanLayout.Element
        /// Whether `_en` reads 1 now.
        public var enabled: Bool
    }

    /// The sysfs directory (`/sys/bus/iio/devices/iio:device0`).
    public var path: String
    /// The `name` attribute (`accel_3d`, `als`); empty without one.
    public var name: String
    /// Channels of known quantities with a `_raw` or `_input` attribute, by name.
    public var polledChannels: [PolledChannel]
    /// The buffer's scan elements (every one whose type parses: those evflow reads, the
    /// timestamp and the others, which reading turns off), by index; empty without a buffer.
    public var scanElements: [ScanElement]
    /// The sysfs mount-matrix attributes present (`mount_matrix`, `in_accel_mount_matrix`,
    /// `in_mount_matrix`), as text: `resolvedMountMatrix(properties:)` chooses among them and udev's.
    public var mountMatrixTexts: [MountMatrix.Source: String]
    /// `trigger/current_trigger`: nil when the device has no trigger directory (its buffer
    /// needs none), empty when none is set.
    public var currentTrigger: String?
    /// `current_timestamp_clock` (`realtime`, `monotonic`, …), nil when absent.
    public var timestampClock: String?
    /// `in_proximity_nearlevel`: the raw proximity level from which something is near, as the
    /// driver has it from the device tree (vcnl4000 and others); nil when absent or not above 0.
    public var proximityNearLevel: Double?

    /// Reads the device at `path`.
    public init(path: String) {
        self.path = path
        name = Sysfs.read(path + "/name") ?? ""
        let attributes = Sysfs.list(path)
        polledChannels = Self.polledChannels(attributes: Set(attributes), path: path)
        scanElements = Self.scanElements(path: path)
        var texts: [MountMatrix.Source: String] = [:]
        for source in MountMatrix.Source.allCases where source != .udev {
            texts[source] = Sysfs.read(path + "/" + source.rawValue)
        }
        mountMatrixTexts = texts
        currentTrigger = Sysfs.exists(path + "/trigger") ? (Sysfs.read(path + "/trigger/current_trigger") ?? "") : nil
        timestampClock = Sysfs.read(path + "/current_timestamp_clock")
        proximityNearLevel = Sysfs.number(path + "/in_proximity_nearlevel").flatMap { $0 > 0 && $0.isFinite ? $0 : nil }
    }

    /// The mount matrix with iio-sensor-proxy's precedence (`MountMatrix.resolve`): udev's
    /// `ACCEL_MOUNT_MATRIX` in `properties` (the hwdb's), else the sysfs attributes; nil
    /// when none gives one.
    public func resolvedMountMatrix(properties: [String: String]) -> (matrix: MountMatrix, source: MountMatrix.Source)? {
        var texts = mountMatrixTexts
        texts[.udev] = properties[MountMatrix.Source.udev.rawValue]
        return MountMatrix.resolve(texts)
    }

    /// The sysfs attributes' mount matrix alone (no udev property).
    public var mountMatrix: MountMatrix? { resolvedMountMatrix(properties: [:])?.matrix }

    /// The quantity a channel name begins with (`accel_x` → accel, `illuminance0` →
    /// illuminance, `temp` → temp), nil for the ones evflow does not read (`voltage0`,
    /// `timestamp`). The longest name wins, and it must be followed by the end, `_` or a digit.
    public static func quantity(ofChannel name: Substring) -> SensorQuantity? {
        var best: SensorQuantity?
        for q in SensorQuantity.allCases where name.hasPrefix(q.rawValue) {
            let rest = name.dropFirst(q.rawValue.count)
            guard rest.isEmpty || rest.first == "_" || rest.first!.isNumber else { continue }
            if best == nil || q.rawValue.count > best!.rawValue.count { best = q }
        }
        return best
    }

    /// The channel of `in_<channel>_raw` / `in_<channel>_input` (nil for other attributes).
    static func channelName(ofAttribute attribute: String) -> (name: Substring, processed: Bool)? {
        guard attribute.hasPrefix("in_") else { return nil }
        for (suffix, processed) in [("_raw", false), ("_input", true)] where attribute.hasSuffix(suffix) {
            let name = attribute.dropFirst(3).dropLast(suffix.count)
            return name.isEmpty ? nil : (name, processed)
        }
        return nil
    }

    /// `in_<channel>_<what>`, else the shared `in_<type>_<what>` (`in_accel_scale` for
    /// `accel_x`), else nil.
    static func channelNumber(_ what: String, channel: Substring, quantity: SensorQuantity, path: String) -> Double? {
        Sysfs.number("\(path)/in_\(channel)_\(what)") ?? Sysfs.number("\(path)/in_\(quantity.rawValue)_\(what)")
    }

    /// A polled channel's conversion as sysfs gives it now (`_scale` and `_offset` read again).
    static func conversion(of channel: PolledChannel, path: String) -> ChannelConversion {
        conversion(channel: Substring(channel.channel.name), quantity: channel.channel.quantity,
                   processed: channel.attribute.hasSuffix("_input"), path: path)
    }

    static func conversion(channel: Substring, quantity: SensorQuantity, processed: Bool, path: String) -> ChannelConversion {
        let factor = ChannelConversion.unitFactor(for: quantity)
        if processed { return ChannelConversion(unitFactor: factor) }
        return ChannelConversion(scale: channelNumber("scale", channel: channel, quantity: quantity, path: path) ?? 1,
                                 offset: channelNumber("offset", channel: channel, quantity: quantity, path: path) ?? 0,
                                 unitFactor: factor)
    }

    private static func polledChannels(attributes: Set<String>, path: String) -> [PolledChannel] {
        var byName: [Substring: PolledChannel] = [:]
        for attribute in attributes.sorted() {
            guard let (name, processed) = channelName(ofAttribute: attribute),
                  let quantity = quantity(ofChannel: name) else { continue }
            // `_input` is already in the kernel's units: preferred over `_raw` when both exist.
            if let existing = byName[name], existing.attribute.hasSuffix("_input") || !processed { continue }
            byName[name] = PolledChannel(channel: SensorChannel(name: String(name), quantity: quantity),
                                         attribute: attribute,
                                         conversion: conversion(channel: name, quantity: quantity, processed: processed, path: path))
        }
        return byName.keys.sorted().map { byName[$0]! }
    }

    private static func scanElements(path: String) -> [ScanElement] {
        let dir = path + "/scan_elements"
        var result: [ScanElement] = []
        for attribute in Sysfs.list(dir) where attribute.hasPrefix("in_") && attribute.hasSuffix("_en") {
            let name = attribute.dropFirst(3).dropLast(3)
            // Every element is listed, read or not: one left enabled changes the scan layout.
            let quantity = quantity(ofChannel: name)
            guard let index = Sysfs.number("\(dir)/in_\(name)_index").flatMap({ Int(exactly: $0) }),
                  let type = Sysfs.read("\(dir)/in_\(name)_type").flatMap(ScanElementType.init(parsing:)) else { continue }
            let conversion = quantity.map { self.conversion(channel: name, quantity: $0, processed: false, path: path) } ?? .init()
            result.append(ScanElement(channel: quantity.map { SensorChannel(name: String(name), quantity: $0) },
                                      element: ScanLayout.Element(name: String(name), index: index, type: type, conversion: conversion),
                                      enabled: Sysfs.read("\(dir)/\(attribute)")?.trimmingSpaces == "1"))
        }
        return result.sorted { $0.element.index < $1.element.index }
    }

    /// Whether the device has a buffer evflow can read: a character device, a `buffer`
    /// directory and at least one scan element of a known quantity.
    public var hasBuffer: Bool {
        Sysfs.exists(path + "/buffer/enable") && scanElements.contains { $0.channel != nil }
    }

    /// Whether this process may set the buffer up and read it: `buffer/enable` writable (not
    /// on a read-only sysfs, as under systemd's `ProtectKernelTunables=`, nor root-only to
    /// another user) and the node readable. Otherwise the sensor is polled, which needs read
    /// access to its attributes only.
    public func bufferIsUsable(devnode: String) -> Bool {
        access(path + "/buffer/enable", W_OK) == 0 && access(devnode, R_OK) == 0
    }

    /// The layout of a buffer with every known channel enabled, and the timestamp when
    /// `withTimestamp` (and the device has one).
    public func layout(withTimestamp: Bool) -> ScanLayout? {
        ScanLayout(elements: scanElements.filter { $0.channel != nil || (withTimestamp && $0.element.isTimestamp) }.map(\.element))
    }

    /// The channels of a buffered reading, in scan order.
    /// A repeated element (`X<n>`) gives `n` channels, `name_0` … `name_<n−1>`, as
    /// `ScanLayout.valueNames` names its values.
    public var bufferedChannels: [SensorChannel] {
        scanElements.flatMap { element -> [SensorChannel] in
            guard let channel = element.channel else { return [] }
            let n = element.element.type.repeatCount
            return n == 1 ? [channel] : (0..<n).map { SensorChannel(name: "\(channel.name)_\($0)", quantity: channel.quantity) }
        }
    }

    /// How the buffer is triggered.
    public enum TriggerChoice: Hashable, Sendable {
        /// The device has no trigger directory: its buffer fills without one.
        case notNeeded
        /// `trigger/current_trigger` is set already: use it.
        case current(String)
        /// None is set; this one, whose name matches the device, is to be set.
        case set(String)
        /// None is set and none matches: the device cannot be read buffered.
        case unavailable
    }

    /// The trigger to use: the device's own when set, else one of the triggers under
    /// `<sysfsRoot>/bus/iio/devices/trigger*` named after the device — the kernel names a
    /// device's own trigger `<name>-dev<N>` (`accel_3d-dev0`); a trigger named `<name>…`
    /// otherwise.
    public func chooseTrigger(sysfsRoot: String) -> TriggerChoice {
        guard let currentTrigger else { return .notNeeded }
        if !currentTrigger.isEmpty { return .current(currentTrigger) }
        let devices = sysfsRoot + "/bus/iio/devices"
        let names = Sysfs.list(devices).filter { $0.hasPrefix("trigger") }.compactMap { Sysfs.read("\(devices)/\($0)/name") }
        let number = path.split(separator: "/").last.map { $0.drop { !$0.isNumber } } ?? ""
        if let own = names.first(where: { $0 == "\(name)-dev\(number)" }) { return .set(own) }
        if !name.isEmpty, let similar = names.first(where: { $0.hasPrefix(name) }) { return .set(similar) }
        return .unavailable
    }
}
