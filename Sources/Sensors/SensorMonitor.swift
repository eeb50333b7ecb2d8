import DeviceStreams
import DeviceIO
import InputModel
import Reactive
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Discovers IIO sensors through udev (subsystem `iio`) and reads them, buffered where the
/// device can be, else by polling sysfs.
///
/// `sensors` is the whole interface: an `Observable<SensorStream>`, one stream per sensor,
/// whose samples complete when the sensor goes away — the shape of
/// `InputDeviceMonitor.devices`. Each subscription runs its own udev monitor on the
/// `InputLoop` thread (udev messages, the sensors' streams), and the reads run on the
/// `SensorThread` (the poll timer, the buffers' fds), whose samples come back to the input
/// loop: a read that blocks in the driver never holds the input thread. Each side's state is
/// confined to its thread, so nothing here takes a lock.
///
/// A sensor costs nothing until its samples are subscribed: no fd is open, its buffer stays
/// off and nothing polls it. Subscribing starts reading; disposing stops it (buffer off and
/// its settings restored, or the sensor leaves the poll timer).
public final class SensorMonitor: Sendable {
    /// What to monitor and how to read.
    public struct Options: Sendable {
        /// Which sensors to report, judged on their description. Default: all.
        public var include: @Sendable (SensorInfo) -> Bool
        /// The period of the poll timer shared by every polled sensor. Default 100 ms (10 Hz):
        /// a light level or a tilt is seen within 100 ms, seven times sooner than
        /// iio-sensor-proxy's 700 ms, at ten wake-ups a second while anything is read.
        public var pollInterval: RxTimeInterval
        /// `buffer/length` (in scans) set on a buffered sensor.
        public var bufferLength: Int
        /// Whether to read buffered where a device can be. Off: every sensor is polled.
        public var preferBuffer: Bool
        /// Where sysfs is mounted (the trigger look-up; udev gives the devices' own paths).
        public var sysfsRoot: String
        /// The udev monitor socket's receive buffer.
        public var udevReceiveBuffer: Int

        /// Every sensor, polled at 10 Hz, buffered where possible with 128 scans of buffer.
        public init(include: @escaping @Sendable (SensorInfo) -> Bool = { _ in true },
                    pollInterval: RxTimeInterval = .milliseconds(100), bufferLength: Int = 128,
                    preferBuffer: Bool = true, sysfsRoot: String = "/sys", udevReceiveBuffer: Int = 1 << 20) {
            self.include = include
            self.pollInterval = pollInterval
            self.bufferLength = bufferLength
            self.preferBuffer = preferBuffer
            self.sysfsRoot = sysfsRoot
            self.udevReceiveBuffer = udevReceiveBuffer
        }
    }

    let loop: InputLoop
    let thread: SensorThread
    let options: Options
    let scopes = Atomic<Int>(0)

    /// Creates a monitor that follows udev and delivers on `loop`'s thread, and reads the
    /// sensors on `thread` (whose `delivery` is `loop`). Nothing happens until `sensors` is
    /// subscribed.
    public init(loop: InputLoop, thread: SensorThread, options: Options = .init()) {
        self.loop = loop
        self.thread = thread
        self.options = options
    }

    /// One `SensorStream` per IIO sensor with channels evflow reads: subscribing enumerates
    /// the present sensors, then follows udev. Delivered on the loop thread, and so are the
    /// streams' samples and removals (read on the sensor thread).
    ///
    /// - `samples` may be subscribed any number of times, one subscription at a time (a
    ///   second one while the first lives fails with
    ///   `SensorStreamError.samplesAlreadySubscribed`); reading runs while it lives.
    /// - `samples` and `removal` complete on the udev `remove` (or when the sensor's node or
    ///   attributes say ENODEV), and a later subscription of either completes at once.
    ///   `removal` reads nothing: a consumer that is not reading learns of the removal too.
    /// - Disposing the subscription stops monitoring, stops every reading and completes every
    ///   stream's samples.
    /// - Fails with `SystemError` when udev cannot be set up.
    public var sensors: Observable<SensorStream> {
        loop.observeRun { [self] observer in SensorMonitorRun(monitor: self, observer: observer) }
    }

    /// Sensors known to live subscriptions (for stats and leak checks).
    public var scopeCount: Int { scopes.load(ordering: .relaxed) }

    func onLoop(_ work: @escaping () -> Void) { loop.onLoop(work) }

    /// The description of the IIO device at `path` (`sysname` `iio:deviceN`, `devnode` its
    /// character device), with how it will be read; nil when it has no channel evflow reads.
    public static func describe(_ device: IIODevice, sysname: String, devnode: String?, properties: [String: String],
                                options: Options) -> (info: SensorInfo, plan: ReadingPlan)? {
        var plan = ReadingPlan.polled
        if options.preferBuffer, let devnode, device.hasBuffer, device.bufferIsUsable(devnode: devnode) {
            switch device.chooseTrigger(sysfsRoot: options.sysfsRoot) {
            case .notNeeded, .current: plan = .buffered(trigger: nil)
            case .set(let trigger): plan = .buffered(trigger: trigger)
            case .unavailable: plan = .polled   // no trigger to drive the buffer: poll (docs/sensors.md)
            }
        }
        let channels: [SensorChannel]
        switch plan {
        case .buffered: channels = device.bufferedChannels
        case .polled: channels = device.polledChannels.map(\.channel)
        }
        guard !channels.isEmpty else { return nil }
        let mount = device.resolvedMountMatrix(properties: properties)
        let info = SensorInfo(id: sensorID(name: device.name, properties: properties, syspath: device.path),
                              name: device.name, sysname: sysname, devnode: devnode, properties: properties,
                              channels: channels, buffered: plan != .polled,
                              mountMatrix: mount?.matrix, mountMatrixSource: mount?.source,
                              proximityNearLevel: channels.contains { $0.quantity == .proximity } ? device.proximityNearLevel : nil)
        return (info, plan)
    }

    /// How a sensor is read.
    public enum ReadingPlan: Hashable, Sendable {
        /// Its `_raw`/`_input` attributes on the poll timer.
        case polled
        /// Its buffer, setting `trigger` first when not nil.
        case buffered(trigger: String?)
    }

    /// Stable across re-plugs: FNV-1a over the name and where the hardware sits (udev's
    /// `ID_PATH`, else the parent's sysfs path), so the same sensor gets the same id after a
    /// driver reload renumbers it `iio:device1`.
    static func sensorID(name: String, properties: [String: String], syspath: String) -> DeviceID {
        let parent = syspath.split(separator: "/").dropLast().joined(separator: "/")
        var hash: UInt32 = 0x811c_9dc5
        for part in [name, properties["ID_PATH"] ?? parent] {
            for byte in part.utf8 { hash = (hash ^ UInt32(byte)) &* 0x0100_0193 }
            hash = (hash ^ 0xff) &* 0x0100_0193
        }
        let h = String(hash, radix: 16)
        return DeviceID(rawValue: "iio-" + String(repeating: "0", count: 8 - h.count) + h)
    }
}

/// The samples of a live sensor were subscribed while another subscription was reading.
public enum SensorStreamError: Error, Hashable, Sendable {
    /// One reading at a time per sensor: share the samples (`share`, a subject) instead.
    case samplesAlreadySubscribed
}

/// One sensor's reading: idle until its samples are subscribed, reading while they are,
/// finished when the sensor goes away. Confined to the sensor thread.
final class SensorReading {
    private enum State {
        case idle
        case reading(Subscriber, Stop)
        case finished
    }

    /// Ends a running reading.
    typealias Stop = () -> Void

    /// One subscription of the samples.
    final class Subscriber: @unchecked Sendable {
        let observer: AnyObserver<SensorSample>
        let cancelled = BooleanDisposable()
        init(_ observer: AnyObserver<SensorSample>) { self.observer = observer }
    }

    private let live = LiveResources.Token()
    private var state = State.idle
    /// Completes when the sensor goes away (`SensorStream.removal`): late subscribers get the
    /// completion at once.
    let removal = PublishSubject<Never>()
    /// Starts reading for a subscriber; returns how to stop it, or throws.
    private let open: (_ deliver: @escaping (SensorSample) -> Void, _ gone: @escaping () -> Void) throws -> Stop

    init(open: @escaping (_ deliver: @escaping (SensorSample) -> Void, _ gone: @escaping () -> Void) throws -> Stop) {
        self.open = open
    }

    func start(_ subscriber: Subscriber) {
        guard !subscriber.cancelled.isDisposed else { return }
        switch state {
        case .finished:
            subscriber.observer.onCompleted()
        case .reading:
            subscriber.observer.onError(SensorStreamError.samplesAlreadySubscribed)
        case .idle:
            do {
                let observer = subscriber.observer
                let stop = try open({ observer.onNext($0) }, { [weak self] in self?.finish() })
                state = .reading(subscriber, stop)
            } catch {
                subscriber.observer.onError(error)
            }
        }
    }

    /// The subscriber disposed: stop reading (the sensor stays, idle).
    func stop(_ subscriber: Subscriber) {
        guard case .reading(let current, let stop) = state, current === subscriber else { return }
        state = .idle
        stop()
    }

    /// The sensor went away: stop reading and complete the samples.
    func finish() {
        let previous = state
        state = .finished
        if case .reading(let subscriber, let stop) = previous {
            stop()
            subscriber.observer.onCompleted()
        }
        removal.onCompleted()
    }

    /// Whether a subscription is reading (tests and stats).
    var isReading: Bool {
        if case .reading = state { return true }
        return false
    }
}

/// How to read a sensor's scale and offset again while it is read (set by its reader).
/// Confined to the sensor thread.
final class Recalibration {
    var reread: (() -> Void)?
}

/// One subscription of `sensors`: its udev monitor and sensors. Confined to the loop thread;
/// the sensors' readings live on the sensor thread (`ThreadedSensor`).
private final class SensorMonitorRun: LoopConfinedRun, @unchecked Sendable {
    private let monitor: SensorMonitor
    private var observer: AnyObserver<SensorStream>?
    private var udev: (context: UdevContext, monitor: UdevMonitor, token: InputLoop.Token)?
    private var entries: [String: ThreadedSensor] = [:]
    private var order: [String] = []

    init(monitor: SensorMonitor, observer: AnyObserver<SensorStream>) {
        self.monitor = monitor
        self.observer = observer
    }

    func start() {
        do {
            let context = try UdevContext()
            // Listen before enumerating, so a sensor plugged in between is seen (once: by syspath).
            let udev = try UdevMonitor(context: context, subsystem: "iio", receiveBuffer: monitor.options.udevReceiveBuffer)
            let token = monitor.loop.register(fd: udev.fd) { [weak self] in
                for _ in 0..<64 {
                    switch udev.receive() {
                    case .device(let device): self?.handle(device, action: device.action ?? "")
                    case .overflow: self?.resynchronize()
                    case .empty: return .drained
                    }
                }
                return .drained
            }
            self.udev = (context, udev, token)
            for device in try context.enumerate(subsystem: "iio", sysname: "iio:device*") where device.isInitialized {
                if self.udev == nil { return }   // disposed from inside onNext
                if entries[device.syspath] == nil { consider(device) }
            }
        } catch {
            let observer = self.observer
            stop()
            observer?.onError(error)
        }
    }

    func stop() {
        observer = nil
        if let udev { monitor.loop.unregister(udev.token, fd: udev.monitor.fd) }
        udev = nil
        let all = order.compactMap { entries[$0] }
        entries = [:]
        order = []
        for reading in all { remove(reading) }
    }

    private func handle(_ device: UdevDevice, action: String) {
        guard udev != nil, device.sysname.hasPrefix("iio:device") else { return }
        switch action {
        case "add":
            if entries[device.syspath] == nil { consider(device) }
        case "change":
            // A driver announcing new attributes (a range or gain switched): scale and offset
            // are read again; what the sensor is and how it is read stay.
            entries[device.syspath]?.rereadConversions()
        case "remove":
            if let reading = entries.removeValue(forKey: device.syspath) {
                order.removeAll { $0 == device.syspath }
                remove(reading)
            }
        default:
            break
        }
    }

    /// uevents were lost: add and remove what changed meanwhile.
    private func resynchronize() {
        guard let udev, let present = try? udev.context.enumerate(subsystem: "iio", sysname: "iio:device*") else { return }
        let now = Set(present.filter(\.isInitialized).map(\.syspath))
        for syspath in order where !now.contains(syspath) {
            if let reading = entries.removeValue(forKey: syspath) { remove(reading) }
        }
        order.removeAll { !now.contains($0) }
        for device in present where device.isInitialized && entries[device.syspath] == nil {
            if self.udev == nil { return }
            consider(device)
        }
    }

    private func remove(_ reading: ThreadedSensor) {
        reading.finish()
        monitor.scopes.wrappingSubtract(1, ordering: .relaxed)
    }

    private func consider(_ device: UdevDevice) {
        let iio = IIODevice(path: device.syspath)
        let options = monitor.options
        guard let (info, plan) = SensorMonitor.describe(iio, sysname: device.sysname, devnode: device.devnode,
                                                         properties: device.properties, options: options),
              options.include(info) else { return }
        let health = SensorHealth()
        let reading = monitor.thread.sensor(pollInterval: options.pollInterval) { deliver, gone throws(SystemError) in
            switch plan {
            case .polled:
                return .polled(try PolledReader(device: iio, health: health, deliver: deliver, gone: gone))
            case .buffered(let trigger):
                return .buffered(try BufferedReader(
                    device: iio, devnode: info.devnode ?? "",
                    setup: .init(trigger: trigger, bufferLength: options.bufferLength, useTimestamp: true),
                    health: health, deliver: deliver, gone: gone))
            }
        }
        entries[device.syspath] = reading
        order.append(device.syspath)
        monitor.scopes.wrappingAdd(1, ordering: .relaxed)
        observer?.onNext(reading.stream(info: info, health: health))
    }
}
