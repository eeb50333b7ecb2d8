import DeviceIO
import DeviceStreams
import InputModel
import Reactive
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Discovers input devices through udev, opens them with libevdev and reads their frames.
///
/// `devices` is the whole interface: an `Observable<DeviceStream>`, one stream per device,
/// whose frames complete when the device goes away. Each subscription runs its own udev
/// monitor (a cold observable: the subscription owns the sockets and fds it opens), and all
/// of its state lives on one `InputLoop` thread — udev events, fd readiness, open retries
/// and every delivery — so nothing here takes a lock. Inside a subscription, each device's resources belong to a `DeviceScope`.
public final class InputDeviceMonitor: Sendable {
    /// What to monitor and how hard to try opening.
    public struct Options: Sendable {
        /// Which devices to open, judged on the udev description (before opening). Default: all.
        public var include: @Sendable (DeviceInfo) -> Bool
        /// How long to retry EACCES/EPERM after `add` before reporting `.inaccessible`.
        public var openRetry: OpenRetryPolicy
        /// The udev monitor socket's receive buffer (`SO_RCVBUFFORCE`, as root; else the
        /// system's limit): room for a hot-plug storm's uevents while the queue is busy.
        public var udevReceiveBuffer: Int

        /// Creates options: every device; retry 50 ms ×2 up to 1 s apart, for about 10 s;
        /// a 4 MiB udev receive buffer.
        public init(include: @escaping @Sendable (DeviceInfo) -> Bool = { _ in true },
                    openRetry: OpenRetryPolicy = .init(), udevReceiveBuffer: Int = 4 << 20) {
            self.include = include
            self.openRetry = openRetry
            self.udevReceiveBuffer = udevReceiveBuffer
        }
    }

    /// Counters since the monitor was created (for `stats`).
    public struct Statistics: Sendable, Hashable {
        /// `SYN_DROPPED` events read (kernel buffer overruns, each followed by a resync).
        public var synDropped: Int
        /// Devices removed because a read said ENODEV, or because a device with their id came
        /// while their sysfs directory was gone (either before udev's `remove`).
        public var removedOnENODEV: Int
        /// Devices removed on udev's `remove`.
        public var removedOnUdevRemove: Int
        /// Devices removed after another read error.
        public var removedOnReadError: Int
        /// Open retries after EACCES/EPERM.
        public var openRetries: Int
        /// Devices reported `.inaccessible`.
        public var inaccessible: Int
        /// Open device streams whose frames nobody subscribed in the handler that received
        /// them: the device was closed at once.
        public var droppedStreams: Int
        /// Times the udev socket overflowed (`ENOBUFS`: uevents were lost) and the devices
        /// were re-enumerated to catch up.
        public var udevOverflows: Int
    }

    let loop: InputLoop
    let options: Options
    let scopes = ScopeCounter()
    let counters = MonitorCounters()
    let udevFD = Atomic<Int32>(-1)
    let powerSupplySubject = PublishSubject<String>()

    /// Creates a monitor that works and delivers on `loop`'s thread. Nothing happens until
    /// `devices` is subscribed.
    public init(loop: InputLoop, options: Options = .init()) {
        self.loop = loop
        self.options = options
    }

    /// One `DeviceStream` per input device: subscribing enumerates the present devices, then
    /// follows udev. Delivered on the loop thread.
    ///
    /// - A device is announced once it is open (`access: .open`), or as `.inaccessible` when
    ///   opening keeps failing (EACCES/EPERM after the retry budget, any other errno at once);
    ///   an inaccessible device that becomes readable (a udev `change`, e.g. a fixed
    ///   permission) ends its stream and is announced again, open.
    /// - An open stream's `frames` must be subscribed from the handler that receives the
    ///   stream (reading starts then, so nothing is missed), at most once. That subscription
    ///   owns the device: disposing it closes the fd. A stream whose frames are not
    ///   subscribed there is dropped — the device is closed at once and counted in
    ///   `droppedStreams` — and a later subscription completes at once.
    /// - `frames` completes on the udev remove or on ENODEV, whichever comes first — or when a
    ///   device with the same id is announced while this one's sysfs directory is gone (a
    ///   re-plug whose remove has not arrived), just before that announcement.
    /// - Disposing the subscription stops monitoring and closes every device.
    /// - Fails with `SystemError` when udev cannot be set up.
    public var devices: Observable<DeviceStream> {
        loop.observeRun { [self] observer in MonitorRun(monitor: self, observer: observer) }
    }

    /// The name of each power supply udev reports added or changed (`hid-…-battery`, `BAT0`),
    /// on the loop thread, while `devices` is subscribed: when `DeviceBatteries` reads a
    /// battery again (docs/batteries.md).
    public var powerSupplyChanges: Observable<String> { powerSupplySubject.asObservable() }

    /// Live device scopes (for stats and leak checks).
    public var scopeCount: Int { scopes.value.load(ordering: .relaxed) }

    /// Counters since creation.
    public var statistics: Statistics {
        Statistics(synDropped: counters.synDropped.load(ordering: .relaxed),
                   removedOnENODEV: counters.removedOnENODEV.load(ordering: .relaxed),
                   removedOnUdevRemove: counters.removedOnUdev.load(ordering: .relaxed),
                   removedOnReadError: counters.removedOnReadError.load(ordering: .relaxed),
                   openRetries: counters.openRetries.load(ordering: .relaxed),
                   inaccessible: counters.inaccessible.load(ordering: .relaxed),
                   droppedStreams: counters.droppedStreams.load(ordering: .relaxed),
                   udevOverflows: counters.udevOverflows.load(ordering: .relaxed))
    }

    /// Runs `work` on the input loop's thread: at once when called there, else as a job.
    func onLoop(_ work: @escaping () -> Void) { loop.onLoop(work) }
}

/// `DeviceStream.frames` of a live device was subscribed a second time.
public enum DeviceStreamError: Error, Hashable, Sendable {
    /// A live device's frames have one owner: the first subscription.
    case framesAlreadySubscribed
}

/// The monitor's counters; relaxed atomics, read for `statistics`.
final class MonitorCounters: Sendable {
    let synDropped = Atomic<Int>(0)
    let removedOnENODEV = Atomic<Int>(0)
    let removedOnUdev = Atomic<Int>(0)
    let removedOnReadError = Atomic<Int>(0)
    let openRetries = Atomic<Int>(0)
    let inaccessible = Atomic<Int>(0)
    let droppedStreams = Atomic<Int>(0)
    let udevOverflows = Atomic<Int>(0)
    let udevWakeUps = Atomic<Int>(0)
    let udevMessages = Atomic<Int>(0)
}

extension InputDeviceMonitor {
    /// The loop everything runs on (diagnostics in the e2e suite).
    public var diagnosticLoop: InputLoop { loop }

    /// udev monitor wake-ups, messages received, and whether its socket has data waiting now.
    public var diagnosticUdev: (wakeUps: Int, messages: Int, pending: Bool) {
        var p = pollfd(fd: udevFD.load(ordering: .relaxed), events: Int16(POLLIN), revents: 0)
        let pending = p.fd >= 0 && poll(&p, 1, 0) == 1
        return (counters.udevWakeUps.load(ordering: .relaxed), counters.udevMessages.load(ordering: .relaxed), pending)
    }
}
