import InputModel
import Reactive

/// One IIO sensor's lifetime as a value: its description, its samples, and its removal — the
/// sensors' counterpart of `DeviceStream`.
///
/// It lives in InputModel, beside `DeviceStream`, rather than in the `Sensors` module that
/// reads the hardware, so that a replay source (Recording) and the hub (Pipeline) make and
/// consume sensor streams without linking libudev — the same reason `DeviceStream` is here.
///
/// `samples` completes when the sensor goes away. Reading starts when it is subscribed and
/// stops when that subscription is disposed: a sensor nobody consumes is not read at all
/// (its buffer stays disabled, nothing polls it). Each source says how often and when it may
/// be subscribed (a live sensor: any number of times, one subscription at a time).
public struct SensorStream: Sendable {
    /// The sensor, as identified when the stream began.
    public let info: SensorInfo
    /// Its samples, one value per channel of `info.channels`, in physical units.
    public let samples: Observable<SensorSample>
    /// Completes when the sensor goes away, whether or not `samples` is subscribed: a
    /// consumer learns of the removal of a sensor nobody reads without starting to read it
    /// (the hub keeps a sensor's session by it). Subscribing it costs nothing and may be done
    /// any number of times; a subscription after the removal completes at once.
    public let removal: Observable<Never>
    /// How its sample times relate to the scheduler's clock (`.live` but for a replay).
    public let clock: SampleClock
    /// Its failed reads and whether it is failed (a replay's never fail).
    public let health: SensorHealth
    /// Whether `STATE` may read it once while nobody reads it (`SensorHub.stateReadingOnce`):
    /// a live sensor's samples are read now; a replay's are its recording's, in time, so
    /// subscribing them for a moment would be no reading.
    public let readableOnce: Bool

    /// A stream of `info` with `samples`, ending with `removal`, whose sample times follow `clock`.
    public init(info: SensorInfo, samples: Observable<SensorSample>, removal: Observable<Never>,
                clock: SampleClock = .live, health: SensorHealth = SensorHealth(), readableOnce: Bool = false) {
        self.info = info
        self.samples = samples
        self.removal = removal
        self.clock = clock
        self.health = health
        self.readableOnce = readableOnce
    }
}
