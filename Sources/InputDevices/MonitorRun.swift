import DeviceIO
import DeviceStreams
import InputModel
import Reactive
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One subscription of `devices`: its udev monitor and devices. Confined to the loop thread.
final class MonitorRun: LoopConfinedRun, @unchecked Sendable {
    private let monitor: InputDeviceMonitor
    private var observer: AnyObserver<DeviceStream>?
    private var running: Running?
    private var entries: [String: DeviceEntry] = [:]
    /// Devices removed on ENODEV whose udev `remove` has not arrived yet: late `change`
    /// events for them must not bring them back.
    private var vanished: Set<String> = []
    /// Properties of the `inputN` parents from their own uevents, by syspath: the name and ids
    /// of a device that is gone from sysfs before its `eventN` child's `add` reaches us.
    private var parents: [String: [String: String]] = [:]
    private var nextSequence = 0
    private var counters: MonitorCounters { monitor.counters }

    init(monitor: InputDeviceMonitor, observer: AnyObserver<DeviceStream>) {
        self.monitor = monitor
        self.observer = observer
    }

    /// The bounds on one wake-up's uevents: at most this many, and no new one once this much
    /// time has passed. An `add` is slow work for a loop turn (libudev's sysfs reads for the
    /// device and its parent, the evdev open, which waits for an RCU grace period in the
    /// kernel: tens to hundreds of milliseconds each in the emulated guest), and a hot-plug
    /// storm queues them faster than that. Without a bound the handler held the loop for 10 s
    /// and more, its jobs and timers — the watchdog's round trip among them — waited behind
    /// it, and systemd killed the daemon (the daemon suite's hot-plug case; the core dump
    /// showed the input thread in `consider` → `udev_device_get_parent_with_subsystem_devtype`).
    /// The socket is level-triggered: what is left wakes the loop again on its next turn,
    /// after the jobs and timers due.
    static let ueventsPerWakeUp = 64
    static let udevTimePerWakeUp: Int64 = 20_000_000

    /// The udev handles, and the monitor socket's registration on the loop.
    private struct Running {
        let context: UdevContext
        let monitor: UdevMonitor
        let udevToken: InputLoop.Token
    }

    func start() {
        do {
            try setUp()
        } catch {
            let observer = self.observer
            stop()
            observer?.onError(error)
        }
    }

    private func setUp() throws(SystemError) {
        let context = try UdevContext()
        // Listen before enumerating, so a device plugged in between is seen (twice at worst:
        // entries are keyed by syspath).
        // `power_supply` too: a device's battery changed (`powerSupplyChanges`, docs/batteries.md).
        let udev = try UdevMonitor(context: context, alsoSubsystems: ["power_supply"],
                                   receiveBuffer: monitor.options.udevReceiveBuffer)
        let counters = self.counters
        let token = monitor.loop.register(fd: udev.fd) { [weak self] in
            counters.udevWakeUps.wrappingAdd(1, ordering: .relaxed)
            let deadline = monotonicNow() + Self.udevTimePerWakeUp
            for _ in 0..<Self.ueventsPerWakeUp where monotonicNow() < deadline {
                switch udev.receive() {
                case .device(let device):
                    counters.udevMessages.wrappingAdd(1, ordering: .relaxed)
                    self?.handle(device, action: device.action ?? "")
                case .overflow:
                    counters.udevOverflows.wrappingAdd(1, ordering: .relaxed)
                    self?.resynchronize()
                case .empty:
                    return .drained
                }
            }
            // More on the socket: it is level-triggered, so the loop comes back next turn.
            return .drained
        }
        monitor.udevFD.store(udev.fd, ordering: .relaxed)
        running = Running(context: context, monitor: udev, udevToken: token)
        for device in try context.enumerateEventDevices() where device.isInitialized {
            // Not yet initialised: udev is still processing it and its `add` will follow.
            if running == nil { return }   // disposed from inside onNext
            if entries[device.syspath] == nil { consider(device) }
        }
    }

    func stop() {
        observer = nil
        if let running {
            monitor.loop.unregister(running.udevToken, fd: running.monitor.fd)
            monitor.udevFD.store(-1, ordering: .relaxed)
        }
        running = nil   // releases the udev monitor (closing its socket) and context
        let all = entries.values.sorted { $0.sequence < $1.sequence }
        entries = [:]
        vanished = []
        parents = [:]
        for entry in all { entry.scope.dispose() }
    }

    /// uevents were lost (the socket overflowed): compare the devices udev knows now with
    /// the entries, and add and remove what changed meanwhile.
    private func resynchronize() {
        guard let running else { return }
        guard let present = try? running.context.enumerateEventDevices() else { return }
        let now = Dictionary(present.filter(\.isInitialized).map { ($0.syspath, $0) }, uniquingKeysWith: { a, _ in a })
        for entry in entries.values.sorted(by: { $0.sequence < $1.sequence }) where now[entry.syspath] == nil {
            remove(entry, cause: .udevRemove)
        }
        vanished = vanished.filter { now[$0] != nil }
        for (syspath, device) in now.sorted(by: { $0.key < $1.key }) where entries[syspath] == nil && !vanished.contains(syspath) {
            if self.running == nil { return }
            consider(device)
        }
    }

    private func handle(_ device: UdevDevice, action: String) {
        guard running != nil else { return }
        let syspath = device.syspath
        if device.subsystem == "power_supply" {
            if action == "change" || action == "add" { monitor.powerSupplySubject.onNext(device.sysname) }
            return
        }
        if device.sysname.hasPrefix("input") {
            switch action {
            case "add", "change": parents[syspath] = device.properties
            case "remove": parents[syspath] = nil
            default: break
            }
            return
        }
        guard device.sysname.hasPrefix("event") else { return }
        switch action {
        case "add":
            if entries[syspath] == nil && !vanished.contains(syspath) { consider(device) }
        case "remove":
            if vanished.remove(syspath) != nil { return }
            if let entry = entries[syspath] { remove(entry, cause: .udevRemove) }
        case "change":
            if vanished.contains(syspath) { return }
            guard let entry = entries[syspath] else {
                consider(device)
                return
            }
            // New properties (e.g. a hwdb update); an inaccessible device gets another chance,
            // since permissions are often fixed by a rule re-run with `change`.
            entry.udevProperties = device.properties
            if case .inaccessible(let ended) = entry.state {
                ended.onCompleted()
                open(entry)
            }
        default:
            break
        }
    }

    private func consider(_ device: UdevDevice) {
        guard let devnode = device.devnode else { return }
        let properties = device.properties
        let parentPath = String(device.syspath[..<(device.syspath.lastIndex(of: "/") ?? device.syspath.endIndex)])
        let info = DeviceDescription.fromUdev(properties: properties, parentAttributes: device.inputParentAttributes,
                                              parentProperties: parents[parentPath] ?? [:], devnode: devnode)
        // evflowd's own twins are its output, never an input (no feedback loop): not opened,
        // not listed.
        if VirtualTwins.isTwin(syspath: device.syspath, devnode: devnode, properties: properties, name: info.name) { return }
        guard monitor.options.include(info) else { return }
        nextSequence += 1
        let entry = DeviceEntry(syspath: device.syspath, info: info, udevProperties: properties,
                                scope: DeviceScope(counter: monitor.scopes), sequence: nextSequence)
        entries[entry.syspath] = entry
        open(entry)
    }

    private func open(_ entry: DeviceEntry) {
        guard let path = entry.info.devnode else { return }
        entry.state = .opening
        let counters = self.counters
        let attempt = openWithRetry(policy: monitor.options.openRetry, scheduler: monitor.loop,
                                    onRetry: { _, _ in counters.openRetries.wrappingAdd(1, ordering: .relaxed) },
                                    open: { try EvdevDevice(path: path) })
            .subscribe(onNext: { [weak self, weak entry] device in
                guard let self, let entry, self.entries[entry.syspath] === entry, case .opening = entry.state else {
                    device.close()
                    return
                }
                self.didOpen(entry, device)
            }, onError: { [weak self, weak entry] error in
                guard let self, let entry, self.entries[entry.syspath] === entry else { return }
                self.didFailToOpen(entry, error)
            })
        entry.scope.insert(attempt)
    }

    private func didOpen(_ entry: DeviceEntry, _ device: EvdevDevice) {
        entry.info = DeviceDescription.refined(entry.info, with: device.snapshot, udevProperties: entry.udevProperties)
        let reader = DeviceReader(device: device, counters: counters) { [weak self, weak entry] error in
            guard let self, let entry else { return }
            self.remove(entry, cause: error.isNoDevice ? .noDevice : .readError)
        }
        entry.state = .open(reader)
        guard running != nil, entry.scope.insert(Disposables.create { reader.stop() }) != nil else {
            reader.stop()
            return
        }
        let claim = StreamClaim()
        let monitor = self.monitor
        let loop = monitor.loop
        // The subscription owns the device: it starts reading, and disposing it closes the fd.
        let frames = Observable<InputFrame>.create { [weak self, weak entry] observer in
            guard claim.take() else {
                observer.onError(DeviceStreamError.framesAlreadySubscribed)
                return Disposables.create()
            }
            let subscription = reader.frames.subscribe(observer)
            monitor.onLoop { if !reader.isStopped { reader.start(loop: loop) } }
            return Disposables.create {
                subscription.dispose()
                monitor.onLoop { self?.release(entry, reader) }
            }
        }
        endGone(sameIDAs: entry)
        observer?.onNext(DeviceStream(info: entry.info, access: .open, frames: frames,
                                      output: EvdevOutputPort(device: device, loop: loop)))
        if !claim.isTaken && !reader.isStopped {
            counters.droppedStreams.wrappingAdd(1, ordering: .relaxed)
            release(entry, reader)
        }
    }

    /// The consumer no longer wants the device (or never did): close it, and keep the entry
    /// so udev's later events for it are recognised.
    private func release(_ entry: DeviceEntry?, _ reader: DeviceReader) {
        reader.stop()
        if let entry, case .open(let current) = entry.state, current === reader { entry.state = .released }
    }

    private func didFailToOpen(_ entry: DeviceEntry, _ error: any Error) {
        let reason = String(describing: error)
        let ended = PublishSubject<InputFrame>()
        entry.state = .inaccessible(ended)
        entry.scope.insert(Disposables.create { ended.onCompleted() })
        counters.inaccessible.wrappingAdd(1, ordering: .relaxed)
        endGone(sameIDAs: entry)
        observer?.onNext(DeviceStream(info: entry.info, access: .inaccessible(reason: reason), frames: ended.asObservable()))
    }

    /// Before `entry` is announced: ends the streams of the other devices with its id whose
    /// `inputN/eventN` directory is gone from sysfs — a re-plug whose old device's `remove`
    /// has not reached us yet (udevd may deliver an `add` before an unrelated device's
    /// `remove`), handled as an ENODEV: removed now, its late `remove` ignored. A device with
    /// the same id whose directory is still there is a second identical device, present: it
    /// stays, and the hub gives the newcomer the next free `#2`, `#3`... So the hub sees a
    /// re-plug as a removal and then an addition, and the re-plugged device finds its id free
    /// (docs/protocol.md §3). The `inputN` number in the syspath is never reused, so a gone
    /// device's directory cannot come back as another's.
    private func endGone(sameIDAs entry: DeviceEntry) {
        let id = entry.info.id
        let gone = entries.values.filter { other in
            other !== entry && other.info.id == id && access(other.syspath, F_OK) != 0
        }
        for other in gone.sorted(by: { $0.sequence < $1.sequence }) { remove(other, cause: .noDevice) }
    }

    private enum RemovalCause { case udevRemove, noDevice, readError }

    /// Removes a device once: whichever of udev's `remove` and ENODEV comes first. Disposing
    /// its scope stops the reader, which completes its frames.
    private func remove(_ entry: DeviceEntry, cause: RemovalCause) {
        guard entries[entry.syspath] === entry else { return }
        entries[entry.syspath] = nil
        switch cause {
        case .udevRemove: counters.removedOnUdev.wrappingAdd(1, ordering: .relaxed)
        case .noDevice:
            counters.removedOnENODEV.wrappingAdd(1, ordering: .relaxed)
            vanished.insert(entry.syspath)
        case .readError: counters.removedOnReadError.wrappingAdd(1, ordering: .relaxed)
        }
        entry.scope.dispose()
    }
}

/// Whether a live stream's frames have been subscribed (once).
private final class StreamClaim: Sendable {
    private let taken = Atomic<Bool>(false)
    func take() -> Bool { !taken.exchange(true, ordering: .acquiringAndReleasing) }
    var isTaken: Bool { taken.load(ordering: .acquiring) }
}

/// One device known to a monitor subscription. Confined to the loop thread.
private final class DeviceEntry {
    enum State {
        case opening
        case open(DeviceReader)
        /// Announced as inaccessible; the subject is that stream's frames (completed when it ends).
        case inaccessible(PublishSubject<InputFrame>)
        /// Open once, then closed because its consumer disposed (or dropped) the stream.
        case released
    }

    let syspath: String
    var info: DeviceInfo
    var udevProperties: [String: String]
    let scope: DeviceScope
    let sequence: Int
    var state: State = .opening

    init(syspath: String, info: DeviceInfo, udevProperties: [String: String], scope: DeviceScope, sequence: Int) {
        self.syspath = syspath
        self.info = info
        self.udevProperties = udevProperties
        self.scope = scope
        self.sequence = sequence
    }
}
