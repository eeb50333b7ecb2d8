import DeviceStreams
import InputModel
import Reactive

extension DeviceHub {
    /// One open device's streams and resources: what `DeviceHub` registers for a device while
    /// its inner sequence in `run`'s merge lives. Confined to the hub's scheduler but for the
    /// fields read by `STATS` (their own locks).
    final class DeviceSession: @unchecked Sendable {
        let info: DeviceInfo
        let slot: StateStore.Slot
        let raw = PublishSubject<InputFrame>()
        let filtered = PublishSubject<InputFrame>()
        /// The gestures of its keys, from the filtered frames (docs/gestures.md).
        let gestures = PublishSubject<GestureEvent>()
        let gestureRun = SingleAssignmentDisposable()
        let initialSettings: DeviceFilterSettings
        let settings: BehaviorSubject<DeviceFilterSettings>
        let frames = SingleAssignmentDisposable()
        /// Frame ages at `read` and `filtered` (written per frame on the scheduler).
        let latency = DeviceLatency()
        /// Key codes whose spurious-release debounce turned on by itself, in order (written in
        /// the filter stage, read by `STATS`).
        let spuriousCodes = PosixLocked<[UInt16]>([])
        /// The twin and the grab (`output: virtual`).
        let output: SessionOutput
        var closed = false

        init(info: DeviceInfo, slot: StateStore.Slot, settings: DeviceFilterSettings, output: SessionOutput) {
            self.info = info
            self.slot = slot
            initialSettings = settings
            self.settings = BehaviorSubject(value: settings)
            self.output = output
        }

        /// The device's frames for a watcher: filtered, or `raw` as read.
        func stream(raw: Bool) -> DeviceStream {
            DeviceStream(info: info, frames: raw ? self.raw.asObservable() : filtered.asObservable(),
                         gestures: gestures.asObservable())
        }
    }
}
