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
        /// The gestures of its keys, from the filtered frames (docs/gestures.md): recognised
        /// only while somebody watches them, by one recogniser that every gesture watcher of the
        /// device shares (a device nobody watches for gestures pays nothing for them). It
        /// starts from the settings current when the first watcher comes, and follows reloads.
        /// It completes with `filtered`, dropping a sequence in progress: no gesture after
        /// removal.
        let gestures: Observable<GestureEvent>
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
        /// The device's battery (docs/batteries.md): its current reading (nil: none) and each
        /// change, sent on the scheduler by `setBattery`; completes when the session closes.
        let battery = BehaviorSubject<DeviceBattery?>(value: nil)
        /// The same reading for readers on other threads (DEVICES, a watcher's snapshot),
        /// without waiting on the subject's gate.
        let currentBattery = PosixLocked<DeviceBattery?>(nil)
        /// The subscription to the source's readings.
        let batteryReadings = SingleAssignmentDisposable()
        var closed = false

        init(info: DeviceInfo, slot: StateStore.Slot, settings: DeviceFilterSettings, output: SessionOutput,
             scheduler: SchedulerType, clock: SampleClock) {
            self.info = info
            self.slot = slot
            initialSettings = settings
            let current = BehaviorSubject(value: settings)
            self.settings = current
            self.output = output
            let filtered = self.filtered
            gestures = Observable.deferred {
                filtered.gestures((try? current.value())?.gestures ?? settings.gestures, scheduler: scheduler,
                                  clock: clock, settingsUpdates: current.asObservable().map(\.gestures))
            }.share()
        }

        /// The device's frames for a watcher: filtered, or `raw` as read; its `info` carries the
        /// battery as it is now, and `batteries` starts with the reading then current.
        func stream(raw: Bool) -> DeviceStream {
            var info = info
            info.battery = currentBattery.withLock { $0 }
            return DeviceStream(info: info, frames: raw ? self.raw.asObservable() : filtered.asObservable(),
                                gestures: gestures, batteries: battery.asObservable())
        }

        /// A new reading from the source; on the scheduler. Only a change is passed on.
        func setBattery(_ reading: DeviceBattery?) {
            guard !closed, reading != currentBattery.withLock({ $0 }) else { return }
            currentBattery.withLock { $0 = reading }
            battery.onNext(reading)
        }
    }
}
