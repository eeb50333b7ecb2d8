import DeviceStreams
import InputModel
import Reactive
import Synchronization

/// The pipeline as an operator over device streams: each `DeviceStream` of the source
/// becomes a session — a slot in the `StateStore`, a noise-filter stage, and two hot streams
/// for watchers (raw and filtered frames) — that lives exactly as long as the device's
/// inner subscription.
///
/// ```
/// source.devices                                  Observable<DeviceStream>
///   → flatMap { session($0) }                     one inner subscription per device
///        frames → filterNoise → slot.write        the session's resources
///                             → filtered subject  → streams(raw:) → watchers
/// ```
///
/// The device's frames completing (removal, ENODEV) completes its inner subscription, and
/// disposing it (or the whole `run`) closes the session: the slot leaves the store and both
/// watcher streams complete. The live path and the replay path build the same pipeline;
/// only the source and the scheduler differ.
///
/// One thread: the hub is subscribed, disposed and reconfigured on its scheduler (the input
/// scheduler), where the source delivers — so it is the single writer of the store's
/// directory and of every slot (the store checks it), and a reload cannot race a device's
/// start. Readers (the server) use the store, `streams(raw:)` and the few counters below
/// from any thread; the registry of sessions and watchers they share (`SessionRegistry`, the
/// same type as `SensorHub`'s) is a short critical section taken when a device comes or goes
/// or a watcher starts, never per frame, and nothing is called under it.
public final class DeviceHub: @unchecked Sendable {
    /// The devices listed by `inaccessible`, keyed by their stream's number (in arrival order).
    private struct InaccessibleDevices {
        var entries: [UInt64: (info: DeviceInfo, reason: String)] = [:]
        var next: UInt64 = 0

        mutating func add(_ info: DeviceInfo, reason: String) -> UInt64 {
            next += 1
            entries[next] = (info, reason)
            return next
        }
    }

    /// What `streams(raw:)` delivers: first `.present` with the devices open when the watcher
    /// started, in the order they were added, then `.added` for each device as it is opened or
    /// announced as inaccessible.
    public typealias Update = HubUpdate<DeviceStream>

    /// The store the hub writes to.
    public let store: StateStore
    /// The scheduler the hub runs on: the source's delivery thread and the filters' timers.
    public let scheduler: SchedulerType
    /// What clock frame ages are on: `monotonic` for live devices (kernel timestamps), `replay`
    /// for a replay's event times.
    public let latencyClock: LatencyClock
    /// The sensors' sessions, beside the devices' (same scheduler; run with `sensors.run`).
    public let sensors: SensorHub

    // Confined to the scheduler.
    private var config: FilterConfig
    /// The panic chord was pressed: every device stays observed until the next reload.
    private var panicked = false
    /// BounceKeys/SlowKeys set live from the socket, by device id (`setAccessibility`).
    private var liveAccessibility = LiveAccessibility()
    /// The ages of devices that are gone, kept for the totals.
    private var goneLatency: [LatencyStage: LatencyHistogram] = [:]
    /// The open sessions and the watchers, shared with the server's threads.
    let registry = SessionRegistry<DeviceSession, DeviceStream>()

    // Read from any thread (STATS, DEVICES): short critical sections, nothing called under them.
    /// Inaccessible devices by the number of their stream; each entry lives exactly as long as
    /// its own stream. Their ids are distinct from each other and from the sessions' (`distinctID`).
    private let inaccessibleDevices = PosixLocked(InaccessibleDevices())
    private let spuriousSubject = PublishSubject<SpuriousReleaseNotice>()
    let outputSubject = PublishSubject<DeviceOutputNotice>()
    private let deviceCountSubject = PublishSubject<Int>()

    /// A hub writing to `store`, running on `scheduler` (the input scheduler); frame ages are
    /// measured against `latencyClock`: `monotonic` for live devices, `replay` for a replay's
    /// event times (no default: a hub cannot tell which source it will run). Sensors run the
    /// configuration's filters and orientation rule, following `reload`, when `filterSensors`
    /// (the daemon); otherwise their samples pass unfiltered (tests of the protocol).
    public init(store: StateStore, config: FilterConfig, scheduler: SchedulerType, latencyClock: LatencyClock,
                filterSensors: Bool = false) {
        self.store = store
        self.config = config
        self.scheduler = scheduler
        self.latencyClock = latencyClock
        sensors = filterSensors ? SensorHub(scheduler: scheduler, config: config) : SensorHub(scheduler: scheduler)
    }

    /// A key or button whose spurious-release debounce turned on by itself (the fault was
    /// seen); sent once per device and code. The daemon writes it to the journal.
    public var spuriousNotices: Observable<SpuriousReleaseNotice> { spuriousSubject.asObservable() }

    /// Per present device, the key codes whose spurious-release debounce turned on by
    /// itself, in the order it happened (`STATS`).
    public var spuriousReleaseCodes: [DeviceID: [UInt16]] {
        var codes: [DeviceID: [UInt16]] = [:]
        for session in registry.sessions {
            let list = session.spuriousCodes.withLock { $0 }
            if !list.isEmpty { codes[session.info.id] = list }
        }
        return codes
    }

    /// The number of open devices (those in the store).
    public var deviceCount: Int { store.count }

    /// The number of open devices each time it changes (a device opened or closed), on the
    /// hub's scheduler: what lets the daemon update its systemd status without polling.
    public var deviceCountChanges: Observable<Int> { deviceCountSubject.asObservable() }

    /// Emits once when the first watcher starts (`streams(raw:)` subscribed), on its thread
    /// and in the middle of its subscription (the watcher may not be ready for frames yet);
    /// at once for a later subscriber. A replay can wait for it to start its clock, so the
    /// first watcher sees the first frames.
    public var firstWatcher: Observable<Void> { registry.firstWatcher }

    /// The open devices, in the order they were added.
    public var devices: [DeviceInfo] { store.devices }

    /// Devices that appeared but could not be opened, with the reason.
    public var inaccessible: [(info: DeviceInfo, reason: String)] {
        inaccessibleDevices.withLock { $0.entries.sorted { ($0.value.info.id, $0.key) < ($1.value.info.id, $1.key) } }
            .map(\.value)
    }

    /// Runs the pipeline over `devices` until disposed; disposing closes every session.
    /// Subscribes and disposes on the hub's scheduler. `onError` gets a failure of the
    /// source (e.g. udev could not be set up); the sessions are closed by then.
    public func run(_ devices: Observable<DeviceStream>,
                    onError: @escaping @Sendable (any Error) -> Void = { _ in }) -> Disposable {
        devices
            .flatMap { [weak self] stream -> Observable<Never> in
                self?.session(for: stream) ?? .empty()
            }
            .subscribe(on: scheduler)
            .subscribe(onError: onError)
    }

    /// The device's inner sequence: subscribing opens its session, and the session closes when
    /// the device's frames end (the sequence completes) or the subscription is disposed.
    private func session(for stream: DeviceStream) -> Observable<Never> {
        Observable<Never>.create { [weak self] observer in
            guard let self else {
                observer.onCompleted()
                return Disposables.create()
            }
            var info = stream.info
            info.id = distinctID(info.id)
            if case .inaccessible(let reason) = stream.access {
                let key = inaccessibleDevices.withLock { $0.add(info, reason: reason) }
                // Watchers get a stream of their own that completes when the device goes (or
                // the hub stops), so they can say `removed`; the source's is subscribed once.
                let gone = PublishSubject<InputFrame>()
                announce(DeviceStream(info: info, access: stream.access, frames: gone.asObservable()))
                let ended = stream.frames.subscribe(onError: { _ in observer.onCompleted() },
                                                    onCompleted: { observer.onCompleted() })
                return Disposables.create { [weak self] in
                    ended.dispose()
                    self?.inaccessibleDevices.withLock { _ = $0.entries.removeValue(forKey: key) }
                    gone.onCompleted()
                }
            }
            let session = open(info, port: stream.output, clock: stream.clock, end: { observer.onCompleted() })
            let output = session.output
            // Only a device with an output port (live) can ever be grabbed: a replay's frames
            // skip the output's hooks with one test of a captured flag.
            let hasPort = output.hasPort
            let slot = session.slot
            let raw = session.raw
            let filtered = session.filtered   // strong: a weak load per frame costs a side-table refcount
            let latency = session.latency
            let clock = scheduler
            // The device's frames go straight into the filter stage: their age at `read` and the
            // raw watchers first, then the filter, whose update writes the slot, then the
            // filtered watchers. The stage's end (the device's frames ending) ends the session.
            session.frames.setDisposable(NoiseFilterStage.subscribe(
                stream.frames, session.initialSettings, scheduler: scheduler, clock: stream.clock,
                settingsUpdates: session.settings.asObservable(),
                onFrame: { [weak self] frame in
                    // With a port, the ages are noted on the way to the twin and recorded
                    // after its write (`onUpdate`); without one nothing waits for them.
                    if hasPort { latency.noteRead(clock.now - frame.time) } else { latency.recordRead(clock.now - frame.time) }
                    raw.onNext(frame)
                    // Before filtering: the grab waits on the raw key state, and the panic
                    // chord must work even if the filter would hold its keys.
                    if hasPort, output.observeRaw(frame) { self?.checkPanicChord() }
                },
                // The filter's every output comes here first: its age is taken and the twin
                // written before the slot and the histograms (`onUpdate`), so the desktop waits
                // for none of the bookkeeping (U1, docs/benchmarks.md). A device without a port
                // (a replay) has no hook here.
                onOutput: hasPort ? { frame in
                    latency.noteFiltered(clock.now - frame.time)
                    output.write(frame)   // to the twin, while grabbed: same thread, same frame
                } : nil,
                onUpdate: { frame, counters in
                    slot.write { w in
                        if let frame { w.apply(frame) }
                        w.setCounters(counters)
                    }
                    if hasPort {
                        latency.recordNoted()
                    } else if let frame {
                        latency.recordFiltered(clock.now - frame.time)
                    }
                },
                onSpurious: { [weak self, weak session] code in
                    guard let self, let session else { return }
                    session.spuriousCodes.withLock { $0.append(code) }
                    self.spuriousSubject.onNext(SpuriousReleaseNotice(device: info, code: code))
                },
                downstream: AnyObserver { event in
                    switch event {
                    case .next(let frame):
                        filtered.onNext(frame)   // the twin has it already (onOutput)
                    case .error, .completed: observer.onCompleted()
                    }
                }))
            // After the subscription, which delivered the keys down at open: the grab waits for them.
            if !session.closed { output.apply(mode: config.outputMode(for: info), panicked: panicked) }
            // The battery's readings come from their own queue (a read can block for seconds).
            if !session.closed, let batteries = stream.batteries {
                session.batteryReadings.setDisposable(batteries.observeOn(scheduler)
                    .subscribe(onNext: { [weak session] reading in session?.setBattery(reading) }))
            }
            return Disposables.create { [weak self] in self?.close(session) }
        }
    }

    /// The id a device whose source calls it `id` goes by here: `id`, or the first of `id#2`,
    /// `id#3`, ... that no present device (open or inaccessible) holds (`DeviceID.distinct`).
    /// Two present devices never share an id, so none closes another's session. The source
    /// ends a device's stream before it announces a device that replaces it (the monitor: a
    /// re-plug whose removal has not arrived yet is ended when the new device is announced),
    /// so a re-plugged device finds its id free again. On the scheduler, the single writer of
    /// both tables.
    private func distinctID(_ id: DeviceID) -> DeviceID {
        let open = registry.ids
        let inaccessible = inaccessibleDevices.withLock { d in Set(d.entries.values.map(\.info.id)) }
        return id.distinct { open.contains($0) || inaccessible.contains($0) }
    }

    /// Starts a session: the store's slot, the watchers' streams. `end` completes the device's
    /// inner sequence (`SessionRegistry.register`).
    private func open(_ info: DeviceInfo, port: (any DeviceOutputPort)?, clock: SampleClock,
                      end: @escaping () -> Void) -> DeviceSession {
        let slot = store.add(info)
        let output = SessionOutput(info: info, port: port, chord: config.panicChord) { [weak self] notice in
            self?.outputSubject.onNext(notice)
        }
        let session = DeviceSession(info: info, slot: slot,
                                    settings: liveAccessibility.settings(config.settings(for: info), for: info), output: output,
                                    scheduler: scheduler, clock: clock)
        registry.register(session, as: info.id, end: end)
        deviceCountSubject.onNext(store.count)
        return session
    }

    /// Ends a session once, when its device's inner sequence in `run`'s merge ends or is
    /// disposed: the filter stage is disposed, the slot leaves the store, the watchers'
    /// streams complete.
    private func close(_ session: DeviceSession) {
        if session.closed { return }
        session.closed = true
        // Twin released and destroyed, device ungrabbed, while its fd is still open.
        session.output.close()
        session.frames.dispose()
        session.batteryReadings.dispose()
        registry.remove(session, as: session.info.id)
        store.remove(session.slot)
        let ages = session.latency.snapshot
        goneLatency[.read, default: LatencyHistogram()].add(ages.read)
        goneLatency[.filtered, default: LatencyHistogram()].add(ages.filtered)
        session.raw.onCompleted()
        session.filtered.onCompleted()
        session.settings.onCompleted()
        session.battery.onCompleted()
        deviceCountSubject.onNext(store.count)
    }

    /// A key of the panic chord went down on a device with a twin: when every key of the
    /// chord is down, across those devices together, release every grab until the next reload.
    private func checkPanicChord() {
        let chord = config.panicChord
        let active = registry.sessions.map(\.output).filter(\.isActive)
        guard !chord.isEmpty, !active.isEmpty else { return }
        let down = active.reduce(into: Set<UInt16>()) { $0.formUnion($1.held) }
        guard chord.isSubset(of: down) else { return }
        panicked = true
        for output in active { output.panic() }
    }

    private func announce(_ stream: DeviceStream) { registry.announce(stream) }

    /// The hub's devices as streams of their frames — filtered, or `raw` as read — for
    /// watchers: first `.present` with the devices open now, then `.added` for each device as
    /// it is opened or announced as inaccessible (an inaccessible stream carries no frames and
    /// completes when the device goes).
    /// Each stream's frames are hot (from the moment of subscribing) and complete when the
    /// device goes away. The snapshot and the later devices neither overlap nor leave a gap,
    /// and delivery is serial, so any thread may subscribe (`SessionRegistry.watch`); disposal
    /// removes the watcher.
    public func streams(raw: Bool = false) -> Observable<Update> {
        registry.watch { $0.stream(raw: raw) }
    }

    /// Applies a new configuration to every device without losing state (SIGHUP). Takes
    /// effect on the scheduler, after the work queued there before it: a device that is
    /// starting gets either the old settings and then the new ones, or the new ones.
    public func reload(_ newConfig: FilterConfig) {
        scheduler.schedule { [weak self] in
            guard let self else { return }
            config = newConfig
            panicked = false
            for session in registry.sessions {
                session.settings.onNext(liveAccessibility.settings(newConfig.settings(for: session.info), for: session.info))
                session.output.chord = newConfig.panicChord
                session.output.apply(mode: newConfig.outputMode(for: session.info), panicked: false)
            }
            sensors.reload(newConfig)
        }
    }
}

extension DeviceHub {
    /// Changes the accessibility filters of the present device `id` live (the `ACCESSIBILITY`
    /// request; `change` nil parts: unchanged) and hands their state after it to `completion`,
    /// or nil when no such device is present. Takes effect on the scheduler, between frames,
    /// as a reload does (a held press whose time is up is delivered); the live values win
    /// over the configuration until the daemon stops (docs/configuration.md).
    public func setAccessibility(of id: DeviceID, _ change: AccessibilityChange,
                                 _ completion: @escaping @Sendable (AccessibilityStatus?) -> Void) {
        scheduler.schedule { [weak self] in
            guard let self, let session = registry[id] else { return completion(nil) }
            liveAccessibility.apply(change, to: id)
            let settings = liveAccessibility.settings(config.settings(for: session.info), for: session.info)
            if change != AccessibilityChange() { session.settings.onNext(settings) }
            let live = liveAccessibility.overrides[id]
            completion(AccessibilityStatus(device: id, settings: settings.accessibility,
                                           bounceKeysLive: live?.bounceKeys != nil, slowKeysLive: live?.slowKeys != nil,
                                           hasKeys: LiveAccessibility.hasKeyboardKeys(session.info)))
        }
    }

    /// The frame ages measured so far (`read`, `filtered`): per present device, and in total
    /// over every device since the hub started. Taken on the hub's scheduler, where the ages are
    /// written (no lock on the frame path), and handed to `completion` there.
    public func latency(_ completion: @escaping @Sendable (HubLatency) -> Void) {
        scheduler.schedule { [weak self] in
            guard let self else { return }
            var total = goneLatency
            var devices: [DeviceID: [LatencyStage: LatencySummary]] = [:]
            for session in registry.sessions {
                let l = session.latency.snapshot
                devices[session.info.id] = [.read: l.read.summary, .filtered: l.filtered.summary]
                total[.read, default: LatencyHistogram()].add(l.read)
                total[.filtered, default: LatencyHistogram()].add(l.filtered)
            }
            completion(HubLatency(clock: latencyClock, devices: devices, total: total))
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
