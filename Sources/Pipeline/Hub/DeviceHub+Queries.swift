import DeviceStreams
import InputModel
import Reactive

// What the hub answers about its devices (the server's DEVICES, STATE and STATS; tools, tests,
// the sleep steps): read-only views of the sessions in its registry.

extension DeviceHub {
    /// Every open device's frames (filtered, or `raw` as read), tagged with the device, from
    /// now on: those of the devices open now and of each device opened later. For tools,
    /// benchmarks and tests; the server builds its watch streams from `streams(raw:)`.
    public func allFrames(raw: Bool = false) -> Observable<(device: DeviceInfo, frame: InputFrame)> {
        streams(raw: raw).flatMap { update -> Observable<(device: DeviceInfo, frame: InputFrame)> in
            let streams: [DeviceStream]
            switch update {
            case .present(let present): streams = present
            case .added(let stream): streams = [stream]
            }
            return Observable.merge(streams.map { stream in stream.frames.map { (device: stream.info, frame: $0) } })
        }
    }
}

extension DeviceHub {
    /// Changes of the devices' outputs (twin made, grabbed, released, refused), on the hub's
    /// scheduler. The daemon writes them to the journal.
    public var outputNotices: Observable<DeviceOutputNotice> { outputSubject.asObservable() }

    /// A present device's output: mode, twin, grab state and why it is not grabbed (DEVICES, STATE).
    public func outputStatus(of id: DeviceID) -> DeviceOutputStatus? {
        registry[id]?.output.status.withLock { $0 }
    }

    /// The gestures a present device's keys make (DEVICES, STATE; nil: none).
    public func gestures(of id: DeviceID) -> DeviceGestures? {
        guard let session = registry[id] else { return nil }
        return (try? session.settings.value())?.gestures.described
    }

    /// A present device's battery as last read (DEVICES, STATE; nil: none; docs/batteries.md).
    public func battery(of id: DeviceID) -> DeviceBattery? {
        registry[id]?.currentBattery.withLock { $0 }
    }

    /// A present device's twin counters (STATS).
    public func outputCounters(of id: DeviceID) -> DeviceOutputCounters? {
        registry[id]?.output.counters
    }
}

extension DeviceHub {
    /// The filter settings a present device runs with now (tests and diagnostics).
    public func currentSettings(of id: DeviceID) -> DeviceFilterSettings? {
        guard let session = registry[id] else { return nil }
        return try? session.settings.value()
    }
}

extension DeviceHub {
    /// The open sessions' outputs and filter settings, in the order they were added: what the
    /// suspend and resume steps act on (DeviceHub+Sleep.swift). On the scheduler.
    var sessionsForSleep: [(info: DeviceInfo, output: SessionOutput, settings: BehaviorSubject<DeviceFilterSettings>)] {
        registry.sessions.map { (info: $0.info, output: $0.output, settings: $0.settings) }
    }
}
