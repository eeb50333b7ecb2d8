import InputModel
import Reactive

/// What the hub did at one end of a sleep, for the journal.
public struct SleepReport: Hashable, Sendable {
    /// The devices with a virtual twin (grabbed or waiting for the grab), in the order they
    /// were added.
    public var devices: [DeviceInfo] = []
    /// After resume: the keys and buttons found down on each of them, which their twins now hold.
    public var keysDown: [DeviceID: Set<UInt16>] = [:]
    /// After resume: devices whose keys could not be read (gone or closed; their sessions are
    /// ending).
    public var unreadable: [DeviceInfo] = []

    /// An empty report.
    public init() {}
}

/// Suspend and resume (docs/virtual-device.md, "Suspend and resume"): the daemon's
/// `SleepMonitor` calls these on logind's `PrepareForSleep`.
extension DeviceHub {
    /// Before sleep: every twin releases the keys and buttons it holds (releases and a
    /// `SYN_REPORT`), so no application keeps a key down through the sleep. Twins and grabs stay.
    /// Runs on the hub's scheduler; `done` is called there, after the releases are written (the
    /// daemon then lets the sleep go on). Observed devices are not touched.
    public func prepareForSleep(done: @escaping @Sendable (SleepReport) -> Void) {
        scheduler.schedule { [weak self] in
            var report = SleepReport()
            for session in self?.sessionsForSleep ?? [] where session.output.releaseForSleep() {
                report.devices.append(session.info)
            }
            done(report)
        }
    }

    /// After resume: for every device with a twin, the key filters start afresh and the twin is
    /// set to the keys down on the device now (`DeviceOutputPort.keysDown`): releases of the
    /// keys that are not down, presses of those that are. Runs on the hub's scheduler; `done`
    /// is called there.
    ///
    /// The key filters start afresh (their key debounce back to "nothing known", what a
    /// device has when it is opened) because what they held or decided before the sleep is
    /// stale: a release held for its window would come out after the resume, maybe after the
    /// twin was pressed again from the hardware, and a re-press swallowed before the sleep
    /// (`upHeld`) would swallow the next release too, leaving the key down on the twin. Done by
    /// a settings update without the key filters and one with them (both on this thread, so no
    /// frame runs between them): codes whose filter changed lose their state, and a value they
    /// held is handed over as on a reload (delivered at once, before the correcting frame that
    /// then sets the twin to the hardware). A key whose spurious-release method had turned on
    /// by itself (`spurious: auto`) starts off again and turns on again at the next fault.
    public func resumed(done: @escaping @Sendable (SleepReport) -> Void = { _ in }) {
        scheduler.schedule { [weak self] in
            guard let self else { return done(SleepReport()) }
            var report = SleepReport()
            for session in sessionsForSleep where session.output.isActive {
                report.devices.append(session.info)
                if let settings = try? session.settings.value(), !settings.keys.isEmpty {
                    var withoutKeys = settings
                    withoutKeys.keys = [:]
                    session.settings.onNext(withoutKeys)
                    session.settings.onNext(settings)
                }
                switch session.output.reconcileAfterResume(at: scheduler.now) {
                case .inactive: break
                case .unreadable: report.unreadable.append(session.info)
                case .reconciled(let down): report.keysDown[session.info.id] = down
                }
            }
            done(report)
        }
    }
}
