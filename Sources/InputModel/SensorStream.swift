import Reactive

/// One IIO sensor's lifetime as a value: its description and its samples — the sensors'
/// counterpart of `DeviceStream`.
///
/// It lives in InputModel, beside `DeviceStream`, rather than in the `Sensors` module that
/// reads the hardware, so that a replay source (Recording) and the hub (Pipeline) make and
/// consume sensor streams without linking libudev — the same reason `DeviceStream` is here.
///
/// `samples` completes when the sensor goes away. Reading starts when it is subscribed and
/// stops when that subscription is disposed: a sensor nobody consumes is not read at all
/// (its buffer stays disabled, nothing polls it). Each source says how often and when it may
/// be subscribed (a live sensor: once, from the handler that receives the stream).
public struct SensorStream: Sendable {
    /// The sensor, as identified when the stream began.
    public let info: SensorInfo
    /// Its samples, one value per channel of `info.channels`, in physical units.
    public let samples: Observable<SensorSample>

    /// A stream of `info` with `samples`.
    public init(info: SensorInfo, samples: Observable<SensorSample>) {
        self.info = info
        self.samples = samples
    }
}
