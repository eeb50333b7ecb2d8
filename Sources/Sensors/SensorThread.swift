import DeviceStreams
import Dispatch
import DeviceIO
import InputModel
import Reactive
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A polled sensor's reader: read once per tick of its `SensorThread`'s poll timer.
/// `PolledReader` (sysfs attributes) is the one evflow uses; the thread only needs this.
public protocol PolledSensorReader: AnyObject {
    /// Reads every channel once and delivers the sample (or counts the failure). May block:
    /// a driver can measure inside `read_raw` (a light sensor's integration time), which is
    /// why it runs on the sensor thread and not on the input thread.
    func poll(time: Int64)
    /// Reads the channels' scale and offset again (udev `change`).
    func rereadConversions()
    /// Closes the reader's fds; called once, when the reading stops.
    func close()
}

/// What a sensor's opener made, on the sensor thread. (Package-wide: `BufferedReader`'s
/// set-up is the Sensors module's own.)
package enum SensorReader {
    /// Read on the thread's poll timer.
    case polled(any PolledSensorReader)
    /// Read when its node is readable (the thread's epoll).
    case buffered(BufferedReader)
}

/// The thread IIO sensors are read on ("evflow.sensors"): an `InputLoop` of its own, with
/// the poll timer every polled sensor shares and every buffered sensor's node.
///
/// Sensor reads block: a polled sysfs read runs the driver's `read_raw`, and a light sensor
/// measuring there holds the read for its integration time (hundreds of milliseconds). On the
/// input thread that stalled every grabbed keyboard and every debounce timer (issue #29);
/// here it stalls only the other sensors. One thread for all of them: sensors are few and
/// slow (10 Hz), and one thread keeps one poll timer (one wake-up per period for every polled
/// sensor) and no locks between the sensors' readers.
///
/// A sensor's samples are read here and delivered on `delivery` (the input scheduler the hub
/// runs on) through `observeOn`; subscribing and disposing them may happen on any thread, and
/// the reading starts and stops here. Nothing is read until a sensor's samples are subscribed.
public final class SensorThread: Sendable {
    /// The thread's loop (its reads, the poll timer, the buffered nodes).
    public let loop: InputLoop
    /// Where samples and removals are delivered.
    public let delivery: SchedulerType
    private let pollers: LoopConfined<[Int64: SensorPoller]>
    /// Whether `loop` is this thread's own (ended by `shutdown`), not a shared one.
    private let ownsLoop: Bool

    /// Starts the thread.
    public init(delivery: SchedulerType, name: String = "evflow.sensors") throws(SystemError) {
        loop = try InputLoop(name: name)
        self.delivery = delivery
        pollers = LoopConfined([:])
        ownsLoop = true
    }

    /// No thread of its own: the sensors are read on `loop` itself, which also delivers — the
    /// arrangement before issue #29 item 6, when a blocking read held the input thread. Only
    /// for `SlowSensorLatencyTests`, to show what its figures are when the reads share the
    /// input thread (the test must be able to fail). `shutdown` leaves `loop` running.
    package init(sharing loop: InputLoop) {
        self.loop = loop
        delivery = loop
        pollers = LoopConfined([:])
        ownsLoop = false
    }

    /// One sensor read on this thread: `open` runs here each time its samples are subscribed
    /// (one subscription at a time), and the reader it returns is read here — polled every
    /// `pollInterval` on the thread's shared timer, or buffered on its node — until the
    /// subscription is disposed or the sensor goes away (`ThreadedSensor.finish`, or `gone`).
    package func sensor(pollInterval: RxTimeInterval = .milliseconds(100),
                       open: @escaping (_ deliver: @escaping (SensorSample) -> Void,
                                        _ gone: @escaping () -> Void) throws(SystemError) -> SensorReader) -> ThreadedSensor {
        let interval = max(pollInterval.nanoseconds, 1_000_000)
        let loop = self.loop
        let pollers = self.pollers
        let calibration = Recalibration()
        let reading = SensorReading { deliver, gone throws in
            switch try open(deliver, gone) {
            case .polled(let reader):
                let poller = pollers.value[interval] ?? SensorPoller(loop: loop, interval: interval)
                pollers.value[interval] = poller
                let key = poller.add(reader)
                calibration.reread = { reader.rereadConversions() }
                return {
                    calibration.reread = nil
                    poller.remove(key)
                    reader.close()
                }
            case .buffered(let reader):
                reader.start(loop: loop)
                calibration.reread = { reader.rereadConversions() }
                return {
                    calibration.reread = nil
                    reader.stop()
                }
            }
        }
        return ThreadedSensor(thread: self, reading: reading, calibration: calibration)
    }

    /// Ends the thread, first letting it run what was queued before (the readings' stops:
    /// buffers off and restored, fds closed), waiting `timeout` at most in all. Returns whether
    /// the thread finished in time; false when a read blocks longer (a driver stuck in
    /// `read_raw`): the thread is then left to end after that read, dropping the stops still
    /// queued (the process exits anyway: the kernel closes the fds; a buffered sensor's
    /// settings, if its stop was among them, stay as the reading set them). Idempotent; its
    /// owner calls it once the sensors' consumers are disposed (evflowd's `InputService`, which
    /// awaits the stops on its own and then calls this with no wait: its caller, the event
    /// loop, must not block; the probe and the tests wait here).
    @discardableResult
    public func shutdown(waitingUpTo timeout: RxTimeInterval) -> Bool {
        guard ownsLoop else { return true }
        // On the thread itself it cannot end before the caller returns: ask, do not wait.
        if loop.isCurrent {
            loop.shutdown()
            return false
        }
        let deadline = monotonicNow().addingSaturated(max(timeout.nanoseconds, 0))
        if !loop.hasFinished {
            let drained = DispatchSemaphore(value: 0)
            loop.schedule { drained.signal() }
            _ = drained.wait(timeout: .now() + .nanoseconds(Int(clamping: max(deadline - monotonicNow(), 0))))
        }
        loop.shutdown()
        while !loop.hasFinished && monotonicNow() < deadline { usleep(1000) }
        return loop.hasFinished
    }
}

/// One sensor read on a `SensorThread`: its samples (read there, delivered on the thread's
/// `delivery`), its removal, and the calls the sensor's monitor makes from its own thread.
public final class ThreadedSensor: Sendable {
    private let thread: SensorThread
    private let reading: LoopConfined<SensorReading>
    private let calibration: LoopConfined<Recalibration>
    /// Completes (on `delivery`) when the sensor goes away; reads nothing.
    public let removal: Observable<Never>

    fileprivate init(thread: SensorThread, reading: SensorReading, calibration: Recalibration) {
        self.thread = thread
        self.reading = LoopConfined(reading)
        self.calibration = LoopConfined(calibration)
        removal = reading.removal.asObservable().observeOn(thread.delivery)
    }

    /// The samples: subscribing starts the reading on the thread (a second subscription while
    /// one lives fails with `SensorStreamError.samplesAlreadySubscribed`), disposing stops it
    /// there; they complete when the sensor goes away. Delivered on `delivery`.
    public var samples: Observable<SensorSample> {
        let loop = thread.loop
        let reading = self.reading
        return Observable<SensorSample>.create { observer in
            let subscriber = SensorReading.Subscriber(observer)
            loop.onLoop { reading.value.start(subscriber) }
            return Disposables.create {
                subscriber.cancelled.dispose()
                loop.onLoop { reading.value.stop(subscriber) }
            }
        }
        .observeOn(thread.delivery)
    }

    /// The sensor went away (udev `remove`): the reading stops and the samples and the
    /// removal complete. Any thread.
    public func finish() {
        let reading = self.reading
        thread.loop.onLoop { reading.value.finish() }
    }

    /// Reads the scale and offset again while the sensor is read (udev `change`). Any thread.
    public func rereadConversions() {
        let calibration = self.calibration
        thread.loop.onLoop { calibration.value.reread?() }
    }

    /// The stream a source hands out for this sensor.
    public func stream(info: SensorInfo, health: SensorHealth, readableOnce: Bool = true) -> SensorStream {
        SensorStream(info: info, samples: samples, removal: removal, health: health, readableOnce: readableOnce)
    }
}

/// A value touched only on one `InputLoop`'s thread, handed between threads inside `Sendable`
/// closures that run there.
final class LoopConfined<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
