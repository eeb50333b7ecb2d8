import DeviceStreams
import InputModel
import Reactive
#if canImport(Glibc)
import Glibc
#endif

/// Where an input device's own battery is in sysfs (`power_supply`), and what it says
/// (docs/batteries.md). Every path is under `root` (`/sys`, or evflowd's `--sysfs`), so tests
/// and replays can use a tree of their own.
///
/// - A live device (one with a `devnode`): from its `inputN` directory (the target of
///   `class/input/eventN/device`) up to four ancestors, stopping at `devices`, the first
///   `power_supply/<name>` whose `type` is `Battery` and whose `scope` is `Device`. hid-input
///   puts its `hid-<uniq>-battery` beside `input/inputN` under the HID device;
///   hid-logitech-hidpp and wacom put theirs there too and set the same scope. A laptop's own
///   `BAT0` has scope `System` or none, so it never attaches to the laptop's keyboard.
/// - A replayed device (no `devnode`), only when `replayedDevices`: with a `uniq`, the
///   battery hid-input would name for it, `class/power_supply/hid-<uniq>-battery`, when that
///   is a device-scope battery.
public struct PowerSupplies: Sendable {
    /// The sysfs root (`/sys`).
    public let root: String
    /// Whether replayed devices get the battery their `uniq` names.
    public let replayedDevices: Bool
    /// How many directories are searched for `power_supply`: `inputN`, `input`, the HID
    /// device, its parent.
    public static let levels = 4

    /// Batteries under `root`; replayed devices get one only with `replayedDevices`.
    public init(root: String = "/sys", replayedDevices: Bool = false) {
        self.root = root.count > 1 && root.hasSuffix("/") ? String(root.dropLast()) : root
        self.replayedDevices = replayedDevices
    }

    /// The `power_supply/<name>` directory of `info`'s battery, or nil when it has none.
    public func supply(of info: DeviceInfo) -> String? {
        if let devnode = info.devnode {
            guard let slash = devnode.lastIndex(of: "/") else { return nil }
            return supply(ofEventNode: String(devnode[devnode.index(after: slash)...]))
        }
        guard replayedDevices, let uniq = info.uniq, !uniq.isEmpty, !uniq.contains("/"), uniq != "..", uniq != "." else { return nil }
        let dir = root + "/class/power_supply/hid-" + uniq + "-battery"
        return Self.isDeviceBattery(dir) ? dir : nil
    }

    /// The battery of the input device whose event node is `eventName` (`event5`).
    func supply(ofEventNode eventName: String) -> String? {
        guard eventName.hasPrefix("event"), !eventName.contains("/"),
              var dir = Self.realPath(root + "/class/input/" + eventName + "/device") else { return nil }
        let top = Self.realPath(root + "/devices") ?? root + "/devices"
        for _ in 0..<Self.levels {
            guard dir.hasPrefix(top + "/") else { return nil }
            let supplies = dir + "/power_supply"
            for name in Self.entries(of: supplies) where Self.isDeviceBattery(supplies + "/" + name) {
                return supplies + "/" + name
            }
            guard let slash = dir.lastIndex(of: "/") else { return nil }
            dir = String(dir[..<slash])
        }
        return nil
    }

    /// Whether `dir` is a power supply of type `Battery` and scope `Device`.
    static func isDeviceBattery(_ dir: String) -> Bool {
        attribute(dir + "/type") == "Battery" && attribute(dir + "/scope") == "Device"
    }

    /// What the battery at `dir` says now; nil when it is gone (no `type` `Battery` any more).
    ///
    /// Reading `capacity` of a HID battery can block for seconds (hid-input asks the device
    /// with GET_REPORT): call it off the input thread (`DeviceBatteries` does). Every value is
    /// checked: a `capacity` that is not a decimal integer counts as absent (then
    /// `capacity_level`, or `unknown`), one outside 0…100 is clamped, a `status` or level
    /// evflowd does not know is `unknown`.
    public static func read(_ dir: String) -> DeviceBattery? {
        guard attribute(dir + "/type") == "Battery" else { return nil }
        let name = String(dir[(dir.lastIndex(of: "/").map { dir.index(after: $0) } ?? dir.startIndex)...])
        let percent = attribute(dir + "/capacity").flatMap(percentValue)
        let level = percent == nil ? (attribute(dir + "/capacity_level").flatMap { DeviceBattery.Level(sysfs: $0) } ?? .unknown) : nil
        let status = attribute(dir + "/status").map { DeviceBattery.Status(sysfs: $0) } ?? .unknown
        return DeviceBattery(percent: percent, level: level, status: status, supply: name)
    }

    /// `capacity`'s text as a percentage: an optional `-` and at most 9 digits, nothing else.
    static func percentValue(_ text: String) -> Int? {
        let digits = text.hasPrefix("-") ? text.dropFirst() : Substring(text)
        guard !digits.isEmpty, digits.count <= 9, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }

    /// A sysfs attribute's text without surrounding white space; nil when it cannot be read.
    /// At most 128 bytes are read, non-blocking at open: a FIFO planted in a fake tree never
    /// hangs the reader, and a huge file is never read whole.
    static func attribute(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        var buffer = [UInt8](repeating: 0, count: 128)
        var n: Int
        repeat { n = Glibc.read(fd, &buffer, buffer.count) } while n < 0 && errno == EINTR
        guard n >= 0 else { return nil }
        let text = String(decoding: buffer[..<n], as: UTF8.self)
        return text.trimmingWhitespace()
    }

    /// `path` with every symbolic link resolved, nil when it does not exist.
    static func realPath(_ path: String) -> String? {
        guard let p = realpath(path, nil) else { return nil }
        defer { free(p) }
        return String(cString: p)
    }

    /// The names in directory `path`, sorted (none when it is not one).
    static func entries(of path: String) -> [String] {
        guard let d = opendir(path) else { return [] }
        defer { closedir(d) }
        var names: [String] = []
        while let e = readdir(d) {
            let name = withUnsafeBytes(of: e.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }
}

/// Reads input devices' batteries on a thread of their own and gives each open device stream
/// its readings (`DeviceStream.batteries`; docs/batteries.md).
///
/// A device's battery is read when its stream's `batteries` is subscribed (the hub does that
/// when the device's session opens), when udev says its power supply changed (`changes`:
/// the `power_supply` uevents' names, from `InputDeviceMonitor.powerSupplyChanges`), and
/// every `interval` for drivers that send no uevent (only while the device has a battery). A
/// device without a battery is looked for one again at each `power_supply` uevent
/// (hid-logitech-hidpp adds its battery after the input device); a battery that goes away
/// reads as nil. Only changed readings are passed on.
///
/// Why a thread of its own: reading `capacity` of a HID battery asks a sleeping device with
/// GET_REPORT and can block for seconds; on the input thread that would hold every
/// keyboard's frames. An `InputLoop` (evflowd's "evflow.battery"), not a dispatch queue:
/// libdispatch's worker pool would start its once-a-second monitor and wake the idle daemon
/// (GlobalExecutor). Readings are delivered on that thread; the hub takes them to its own
/// scheduler. Disposing a device's readings stops its timer and its share of `changes`; a
/// read already running finishes and its reading is dropped.
public final class DeviceBatteries: Sendable {
    /// Where batteries are looked for.
    public let supplies: PowerSupplies
    /// Where batteries are read: evflowd's battery thread (an `InputLoop` of its own).
    public let readScheduler: SchedulerType
    /// How often a battery is read besides its uevents.
    public let interval: RxTimeInterval
    private let changes: Observable<String>

    /// Reads batteries under `supplies` on `readScheduler`, again on each name `changes`
    /// emits and every `interval`.
    public init(supplies: PowerSupplies, changes: Observable<String> = .empty(),
                readScheduler: SchedulerType, interval: RxTimeInterval = .seconds(60)) {
        self.supplies = supplies
        self.changes = changes
        self.readScheduler = readScheduler
        self.interval = interval
    }

    /// `stream` with its battery readings; an inaccessible device's stream as it is.
    public func attach(to stream: DeviceStream) -> DeviceStream {
        guard case .open = stream.access else { return stream }
        return stream.with(batteries: readings(of: stream.info))
    }

    /// The readings of `info`'s battery, as described above; delivered on `readScheduler`.
    public func readings(of info: DeviceInfo) -> Observable<DeviceBattery?> {
        let supplies = self.supplies, readScheduler = self.readScheduler, interval = self.interval
        let changes = self.changes
        return Observable<DeviceBattery?>.create { observer in
            let reader = BatteryReader(supplies: supplies, info: info, scheduler: readScheduler, interval: interval,
                                       deliver: { observer.onNext($0) })
            let ticks = Observable<BatteryReader.Tick>.merge([.just(.always), changes.map { .supply($0) }])
                .observeOn(readScheduler)
                .subscribe(onNext: { reader.tick($0) })
            return Disposables.create {
                ticks.dispose()
                _ = readScheduler.schedule { reader.stop() }
            }
        }.distinctUntilChanged()
    }
}

/// One device's battery look-up, reads and timer; confined to the read thread.
///
/// The timer runs only while the device has a battery: a device without one is looked at again
/// on `power_supply` uevents only (a battery that registers late sends `add`), so an idle
/// daemon's devices without batteries never wake the battery thread.
final class BatteryReader: @unchecked Sendable {
    enum Tick {
        /// The first read and the timer's.
        case always
        /// A `power_supply` uevent for the supply of this name.
        case supply(String)
    }

    private let supplies: PowerSupplies
    private let info: DeviceInfo
    private let scheduler: SchedulerType
    private let interval: RxTimeInterval
    private let deliver: (DeviceBattery?) -> Void
    private var supply: String?
    private var timer: Disposable?
    private var stopped = false

    init(supplies: PowerSupplies, info: DeviceInfo, scheduler: SchedulerType, interval: RxTimeInterval,
         deliver: @escaping (DeviceBattery?) -> Void) {
        self.supplies = supplies
        self.info = info
        self.scheduler = scheduler
        self.interval = interval
        self.deliver = deliver
    }

    /// Reads for `tick`, unless it is another supply's uevent; starts or stops the timer.
    func tick(_ tick: Tick) {
        guard !stopped, let reading = take(tick) else { return }
        if reading != nil, timer == nil {
            timer = Observable<Int>.interval(interval, scheduler: scheduler)
                .subscribe(onNext: { [weak self] _ in self?.tick(.always) })
        } else if reading == nil {
            timer?.dispose()
            timer = nil
        }
        deliver(reading)
    }

    /// The end of the device's readings: no timer, no more reads.
    func stop() {
        stopped = true
        timer?.dispose()
        timer = nil
    }

    /// The reading for `tick`: `.some(nil)` when the device has no battery, nil when the tick
    /// is another supply's uevent.
    func take(_ tick: Tick) -> DeviceBattery?? {
        if case .supply(let name) = tick, let supply, !supply.hasSuffix("/" + name) { return nil }
        if supply == nil { supply = supplies.supply(of: info) }
        guard let dir = supply else { return .some(nil) }
        let reading = PowerSupplies.read(dir)
        if reading == nil { supply = nil }
        return .some(reading)
    }
}
