import Reactive

/// One sensor's lifetime as a value, the sensor counterpart of `DeviceStream`: its
/// description and its samples, completing when the sensor goes away.
///
/// Every sensor source (the IIO monitor, `SensorReplaySource.sensors`) is an
/// `Observable<SensorStream>`. It lives in InputModel, beside `DeviceStream`, rather than in the
/// `Sensors` module that reads the hardware, so the replay source (Recording) and the hub
/// (Pipeline) make and consume sensor streams without linking libudev. Reading starts when `samples` is subscribed and stops when that
/// subscription is disposed, so a sensor nobody consumes costs nothing (no buffer enabled, no
/// polling); each source says how often `samples` may be subscribed.
public struct SensorStream: Sendable {
    /// The sensor, as identified when the stream began.
    public let info: SensorInfo
    /// Its samples in physical units; completes when the sensor goes away.
    public let samples: Observable<SensorSample>
    /// Completes when the sensor goes away, whether or not `samples` is subscribed: a
    /// consumer learns of the removal of a sensor nobody reads without starting to read it.
    /// Subscribing it costs nothing (no reading) and may be done any number of times.
    public let removal: Observable<Never>

    /// A stream of `info` with `samples`, ending with `removal`.
    public init(info: SensorInfo, samples: Observable<SensorSample>, removal: Observable<Never>) {
        self.info = info
        self.samples = samples
        self.removal = removal
    }
}
