import Dispatch
import InputModel
import Reactive
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Discovers input devices through udev, opens them with libevdev and reads their frames.
///
/// All state lives on the scheduler's serial queue: udev events, fd readiness (reported by a
/// `ReadinessLoop` thread), open retries and every delivery run there, so nothing here takes
/// a lock. Each device gets a
/// `DeviceScope` that owns everything made for it; removal disposes it.
public final class InputDeviceMonitor: @unchecked Sendable {
    /// What to monitor and how hard to try opening.
    public struct Options: Sendable {
        /// Which devices to open, judged on the udev description (before opening). Default: all.
        public var include: @Sendable (DeviceInfo) -> Bool
        /// How long to retry EACCES/EPERM after `add` before reporting `.inaccessible`.
        public var openRetry: OpenRetryPolicy

        /// Creates options: every device; retry 50 ms ×2 up to 1 s apart, for about 10 s.
        public init(include: @escaping @Sendable (DeviceInfo) -> Bool = { _ in true },
                    openRetry: OpenRetryPolicy = .init()) {
            self.include = include
            self.openRetry = openRetry
        }
    }

    /// Counters since the monitor was created (for `stats`).
    public struct Statistics: Sendable, Hashable {
        /// `SYN_DROPPED` events read (kernel buffer overruns, each followed by a resync).
        public var synDropped: Int
        /// Devices removed because a read said ENODEV (before udev's `remove`).
        public var removedOnENODEV: Int
        /// Devices removed on udev's `remove`.
        public var removedOnUdevRemove: Int
        /// Devices removed after another read error.
        public var removedOnReadError: Int
        /// Open retries after EACCES/EPERM.
        public var openRetries: Int
        /// Devices reported `.inaccessible`.
        public var inaccessible: Int
    }

    private let scheduler: SerialDispatchQueueScheduler
    private let options: Options
    private let queueKey = DispatchSpecificKey<UInt8>()
    private let scopes = ScopeCounter()
    private let counters = MonitorCounters()
    private let nextObserverID = Atomic<UInt64>(0)
    let udevFD = Atomic<Int32>(-1)

    // Confined to the scheduler's queue.
    private var observers: [(id: UInt64, observer: AnyObserver<DeviceChange>)] = []
    private var running: Running?
    private var entries: [String: DeviceEntry] = [:]
    /// Devices removed on ENODEV whose udev `remove` has not arrived yet: late `change`
    /// events for them must not bring them back.
    private var vanished: Set<String> = []
    private var nextSequence = 0
    /// Properties of the `inputN` parents from their own uevents, by syspath: the name and ids
    /// of a device that is gone from sysfs before its `eventN` child's `add` reaches us.
    private var parents: [String: [String: String]] = [:]

    /// Creates a monitor that works and delivers on `scheduler`. Nothing happens until
    /// `deviceChanges` is subscribed.
    public init(scheduler: SerialDispatchQueueScheduler, options: Options = .init()) {
        self.scheduler = scheduler
        self.options = options
        scheduler.queue.setSpecific(key: queueKey, value: 1)
    }

    deinit {
        scheduler.queue.setSpecific(key: queueKey, value: nil)
    }

    /// Subscribing enumerates the present devices, then follows udev; `.added` only once the
    /// device is open and being read; `.inaccessible(info, reason:)` when open keeps failing
    /// (EACCES/EPERM after the retry budget, or any other errno at once); `.removed` on the udev
    /// remove or on ENODEV, whichever comes first (once). Disposing stops monitoring and
    /// disposes every DeviceScope. Delivered on the scheduler.
    ///
    /// Several subscribers share one udev monitor; a later subscriber first receives the
    /// devices already announced. Fails with `SystemError` when udev cannot be set up.
    public var deviceChanges: Observable<DeviceChange> {
        Observable<DeviceChange>.create { [self] observer in
            let id = nextObserverID.wrappingAdd(1, ordering: .relaxed).newValue
            let cancelled = BooleanDisposable()
            onQueue {
                if !cancelled.isDisposed { self.attach(id: id, observer) }
            }
            return Disposables.create {
                cancelled.dispose()
                self.onQueue { self.detach(id: id) }
            }
        }
    }

    /// The frames of a device announced as added; completes when it is removed. On the scheduler.
    ///
    /// A device that is not (or no longer) open completes at once. Subscribing from inside a
    /// `deviceChanges` handler misses nothing: reading starts after the `.added` delivery.
    public func frames(for device: DeviceInfo) -> Observable<InputFrame> {
        Observable<InputFrame>.create { [self] observer in
            let subscription = ScopedSubscription()
            onQueue {
                guard !subscription.isDisposed else { return }
                guard let entry = self.entry(for: device), case .open(let reader) = entry.state else {
                    observer.onCompleted()
                    return
                }
                let inner = reader.frames.subscribe(observer)
                if let key = entry.scope.insert(inner) {
                    subscription.attach(scope: entry.scope, key: key)
                }
            }
            return subscription
        }
    }

    /// Live device scopes (for stats and leak checks).
    public var scopeCount: Int { scopes.value.load(ordering: .relaxed) }

    /// Counters since creation.
    public var statistics: Statistics {
        Statistics(synDropped: counters.synDropped.load(ordering: .relaxed),
                   removedOnENODEV: counters.removedOnENODEV.load(ordering: .relaxed),
                   removedOnUdevRemove: counters.removedOnUdev.load(ordering: .relaxed),
                   removedOnReadError: counters.removedOnReadError.load(ordering: .relaxed),
                   openRetries: counters.openRetries.load(ordering: .relaxed),
                   inaccessible: counters.inaccessible.load(ordering: .relaxed))
    }

    // MARK: Queue confinement

    private var isOnQueue: Bool { DispatchQueue.getSpecific(key: queueKey) != nil }

    private func onQueue(_ work: @escaping () -> Void) {
        if isOnQueue { work() } else { scheduler.schedule(work) }
    }

    // MARK: Subscribers

    private func attach(id: UInt64, _ observer: AnyObserver<DeviceChange>) {
        observers.append((id, observer))
        if running != nil {
            for entry in entries.values.sorted(by: { $0.sequence < $1.sequence }) {
                if let change = entry.announcement { observer.onNext(change) }
            }
            return
        }
        do {
            try start()
        } catch {
            observers.removeAll { $0.id == id }
            stop()
            observer.onError(error)
        }
    }

    private func detach(id: UInt64) {
        let before = observers.count
        observers.removeAll { $0.id == id }
        if before > 0 && observers.isEmpty { stop() }
    }

    private func broadcast(_ change: DeviceChange) {
        for (_, observer) in observers { observer.onNext(change) }
    }

    // MARK: Monitoring

    /// The udev handles and the readiness loop that watches the monitor socket and the devices.
    private struct Running {
        let context: UdevContext
        let monitor: UdevMonitor
        let loop: ReadinessLoop
        let udevToken: ReadinessLoop.Token
    }

    private func start() throws(SystemError) {
        let context = try UdevContext()
        // Listen before enumerating, so a device plugged in between is seen (twice at worst:
        // entries are keyed by syspath).
        let monitor = try UdevMonitor(context: context)
        let loop = try ReadinessLoop(scheduler: scheduler)
        let counters = self.counters
        let token = loop.register(fd: monitor.fd) { [weak self] in
            counters.udevWakeUps.wrappingAdd(1, ordering: .relaxed)
            while let device = monitor.receive() {
                counters.udevMessages.wrappingAdd(1, ordering: .relaxed)
                self?.handle(device, action: device.action ?? "")
            }
        }
        udevFD.store(monitor.fd, ordering: .relaxed)
        running = Running(context: context, monitor: monitor, loop: loop, udevToken: token)
        for device in try context.enumerateEventDevices() where device.isInitialized {
            // Not yet initialised: udev is still processing it and its `add` will follow.
            if running == nil { return }   // the only subscriber left from inside onNext
            if entries[device.syspath] == nil { consider(device) }
        }
    }

    private func stop() {
        if let running {
            running.loop.unregister(running.udevToken)
            udevFD.store(-1, ordering: .relaxed)
        }
        let loop = running?.loop
        running = nil   // releases the udev monitor (closing its socket) and context
        let all = entries.values.sorted { $0.sequence < $1.sequence }
        entries = [:]
        vanished = []
        parents = [:]
        for entry in all { entry.scope.dispose() }
        loop?.stop()   // after the readers have unregistered
    }

    private func handle(_ device: UdevDevice, action: String) {
        guard running != nil else { return }
        let syspath = device.syspath
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
            if case .inaccessible = entry.state { open(entry) }
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
        guard options.include(info) else { return }
        nextSequence += 1
        let entry = DeviceEntry(syspath: device.syspath, info: info, udevProperties: properties,
                                scope: DeviceScope(counter: scopes), sequence: nextSequence)
        entries[entry.syspath] = entry
        open(entry)
    }

    private func open(_ entry: DeviceEntry) {
        guard let path = entry.info.devnode else { return }
        entry.state = .opening
        let counters = self.counters
        let attempt = openWithRetry(policy: options.openRetry, scheduler: scheduler,
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
        guard let loop = running?.loop, entry.scope.insert(Disposables.create { reader.stop() }) != nil else {
            reader.stop()
            return
        }
        reader.start(loop: loop)
        broadcast(.added(entry.info))
    }

    private func didFailToOpen(_ entry: DeviceEntry, _ error: any Error) {
        let reason = String(describing: error)
        entry.state = .inaccessible(reason)
        counters.inaccessible.wrappingAdd(1, ordering: .relaxed)
        broadcast(.inaccessible(entry.info, reason: reason))
    }

    private enum RemovalCause { case udevRemove, noDevice, readError }

    /// Removes a device once: whichever of udev's `remove` and ENODEV comes first.
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
        let announced = entry.announcement != nil
        entry.scope.dispose()
        if announced { broadcast(.removed(entry.info)) }
    }

    private func entry(for device: DeviceInfo) -> DeviceEntry? {
        entries.values.first { $0.info.devnode == device.devnode && $0.info.id == device.id }
    }
}

/// One device known to the monitor. Confined to the monitor's queue.
private final class DeviceEntry {
    enum State {
        case opening
        case open(DeviceReader)
        case inaccessible(String)
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

    /// What subscribers were told about the device, if anything yet.
    var announcement: DeviceChange? {
        switch state {
        case .opening: return nil
        case .open: return .added(info)
        case .inaccessible(let reason): return .inaccessible(info, reason: reason)
        }
    }
}

/// The monitor's counters; relaxed atomics, read for `statistics`.
final class MonitorCounters: Sendable {
    let synDropped = Atomic<Int>(0)
    let removedOnENODEV = Atomic<Int>(0)
    let removedOnUdev = Atomic<Int>(0)
    let removedOnReadError = Atomic<Int>(0)
    let openRetries = Atomic<Int>(0)
    let inaccessible = Atomic<Int>(0)
    let udevWakeUps = Atomic<Int>(0)
    let udevMessages = Atomic<Int>(0)
}

/// A `frames(for:)` subscription: a member of the device's scope that the subscriber can also
/// end early, which removes it from the scope so short-lived subscribers do not pile up there.
final class ScopedSubscription: Cancelable, @unchecked Sendable {
    private struct State {
        /// Weak: a subscriber that keeps its disposable after the device went must not keep
        /// the device's scope alive (it would still count in `scopeCount`).
        weak var scope: DeviceScope?
        var key: CompositeDisposable.Key?
        var disposed = false
    }

    private let state = Mutex(State())

    var isDisposed: Bool { state.withLock { $0.disposed } }

    func attach(scope: DeviceScope, key: CompositeDisposable.Key) {
        let disposeNow = state.withLock { s -> Bool in
            if s.disposed { return true }
            s.scope = scope
            s.key = key
            return false
        }
        if disposeNow { scope.remove(key) }
    }

    func dispose() {
        let taken = state.withLock { s -> (DeviceScope, CompositeDisposable.Key)? in
            if s.disposed { return nil }
            s.disposed = true
            defer { s.scope = nil; s.key = nil }
            guard let scope = s.scope, let key = s.key else { return nil }
            return (scope, key)
        }
        if let (scope, key) = taken { scope.remove(key) }
    }
}

extension InputDeviceMonitor {
    /// The scheduler everything runs on (diagnostics in the e2e suite).
    public var diagnosticScheduler: SerialDispatchQueueScheduler { scheduler }

    /// udev monitor wake-ups, messages received, and whether its socket has data waiting now.
    public var diagnosticUdev: (wakeUps: Int, messages: Int, pending: Bool) {
        var p = pollfd(fd: udevFD.load(ordering: .relaxed), events: Int16(POLLIN), revents: 0)
        let pending = p.fd >= 0 && poll(&p, 1, 0) == 1
        return (counters.udevWakeUps.load(ordering: .relaxed), counters.udevMessages.load(ordering: .relaxed), pending)
    }
}
