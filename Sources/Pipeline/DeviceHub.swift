import InputModel
import Reactive
import Synchronization

/// Wires input sources to the filter pipeline and the state store, one session per device.
///
/// For every `added` device: a slot in the `StateStore`, a noise-filter stage, and two hot
/// streams for watchers (raw and filtered frames). Everything subscribed for the device
/// belongs to its session's `CompositeDisposable`; removal (the `removed` change, or the
/// device's frames completing, e.g. ENODEV) disposes it, completes both streams, and takes
/// the device out of the store. The live path and the replay path build the same pipeline;
/// only the sources and the scheduler differ.
public final class DeviceHub: @unchecked Sendable {
    /// One device's streams and resources.
    final class Session: @unchecked Sendable {
        let info: DeviceInfo
        let raw = PublishSubject<InputFrame>()
        let filtered = PublishSubject<InputFrame>()
        let settings: BehaviorSubject<DeviceFilterSettings>
        let resources = CompositeDisposable()

        init(info: DeviceInfo, settings: DeviceFilterSettings) {
            self.info = info
            self.settings = BehaviorSubject(value: settings)
        }
    }

    /// The store the hub writes to.
    public let store: StateStore
    private let scheduler: SchedulerType
    private let sessions = Mutex<[DeviceID: Session]>([:])
    private let config: Mutex<FilterConfig>
    private let changeSubject = PublishSubject<DeviceChange>()
    private let inaccessibleDevices = Mutex<[DeviceID: (info: DeviceInfo, reason: String)]>([:])
    private let spurious = Mutex<[DeviceID: [UInt16]]>([:])
    private let spuriousSubject = PublishSubject<SpuriousReleaseNotice>()

    /// A hub writing to `store`, with timers on `scheduler` (the input scheduler).
    public init(store: StateStore, config: FilterConfig, scheduler: SchedulerType) {
        self.store = store
        self.config = Mutex(config)
        self.scheduler = scheduler
    }

    /// Device added/removed notices, sent after the store reflects the change.
    public var deviceChanges: Observable<DeviceChange> { changeSubject.asObservable() }

    /// A key or button whose spurious-release debounce turned on by itself (the fault was
    /// seen); sent once per device and code. The daemon writes it to the journal.
    public var spuriousNotices: Observable<SpuriousReleaseNotice> { spuriousSubject.asObservable() }

    /// Per present device, the key codes whose spurious-release debounce turned on by
    /// itself, in the order it happened (`STATS`).
    public var spuriousReleaseCodes: [DeviceID: [UInt16]] { spurious.withLock { $0 } }

    /// The number of devices with a session.
    public var deviceCount: Int { sessions.withLock { $0.count } }

    /// Starts consuming `changes`; `frames(info)` gives each device's frames, completing when
    /// the device goes away. Disposing the result ends every session.
    public func start(changes: Observable<DeviceChange>,
                      frames: @escaping (DeviceInfo) -> Observable<InputFrame>) -> Disposable {
        let subscription = changes.subscribe(onNext: { [weak self] change in
            guard let self else { return }
            switch change {
            case .added(let info):
                self.inaccessibleDevices.withLock { _ = $0.removeValue(forKey: info.id) }
                self.open(info, frames: frames(info))
            case .removed(let info):
                if self.inaccessibleDevices.withLock({ $0.removeValue(forKey: info.id) }) != nil {
                    self.changeSubject.onNext(change)
                }
                self.close(info.id)
            case .inaccessible(let info, let reason):
                self.close(info.id)
                self.inaccessibleDevices.withLock { $0[info.id] = (info, reason) }
                self.changeSubject.onNext(change)
            }
        })
        return Disposables.create { [weak self] in
            subscription.dispose()
            self?.closeAll()
        }
    }

    private func open(_ info: DeviceInfo, frames: Observable<InputFrame>) {
        close(info.id)   // a stale session for the same device (re-plug without remove)
        let settings = config.withLock { $0.settings(for: info) }
        let session = Session(info: info, settings: settings)
        let slot = store.add(info)
        sessions.withLock { $0[info.id] = session }
        let raw = session.raw
        let filteredStream = frames
            .do(onNext: { raw.onNext($0) })
            .filterNoise(settings, scheduler: scheduler, settingsUpdates: session.settings.asObservable(),
                         onUpdate: { frame, counters in
                             slot.write { w in
                                 if let frame { w.apply(frame) }
                                 w.setCounters(counters)
                             }
                         },
                         onSpurious: { [weak self] code in
                             guard let self else { return }
                             self.spurious.withLock { $0[info.id, default: []].append(code) }
                             self.spuriousSubject.onNext(SpuriousReleaseNotice(device: info, code: code))
                         })
        let id = info.id
        let filtered = session.filtered   // strong: a weak load per frame costs a side-table refcount
        session.resources.insert(filteredStream.subscribe(
            onNext: { filtered.onNext($0) },
            onError: { [weak self] _ in self?.close(id) },
            onCompleted: { [weak self] in self?.close(id) }))
        changeSubject.onNext(.added(info))
    }

    private func close(_ id: DeviceID) {
        guard let session = sessions.withLock({ $0.removeValue(forKey: id) }) else { return }
        session.resources.dispose()
        store.remove(id)
        spurious.withLock { _ = $0.removeValue(forKey: id) }
        session.raw.onCompleted()
        session.filtered.onCompleted()
        session.settings.onCompleted()
        changeSubject.onNext(.removed(session.info))
    }

    private func closeAll() {
        for id in sessions.withLock({ Array($0.keys) }) { close(id) }
    }

    /// The device's frames from now on (filtered or raw); completes when it goes away. Nil
    /// when the device is not present.
    public func frames(of id: DeviceID, raw: Bool = false) -> Observable<InputFrame>? {
        guard let session = sessions.withLock({ $0[id] }) else { return nil }
        return raw ? session.raw.asObservable() : session.filtered.asObservable()
    }

    /// The devices with a session.
    public var devices: [DeviceInfo] { store.devices }

    /// Devices that appeared but could not be opened, with the reason.
    public var inaccessible: [(info: DeviceInfo, reason: String)] {
        inaccessibleDevices.withLock { Array($0.values) }.sorted { $0.info.id < $1.info.id }
    }

    /// Applies a new configuration to every device without losing state (SIGHUP).
    public func reload(_ newConfig: FilterConfig) {
        config.withLock { $0 = newConfig }
        for session in sessions.withLock({ Array($0.values) }) {
            session.settings.onNext(newConfig.settings(for: session.info))
        }
    }
}

/// The spurious-release debounce of one key turned on by itself.
public struct SpuriousReleaseNotice: Hashable, Sendable {
    /// The device.
    public var device: DeviceInfo
    /// The `EV_KEY` code.
    public var code: UInt16
}
