import InputModel
import Reactive
import Synchronization

/// A change of a device's output (twin made, grabbed, released, refused), for the journal.
public struct DeviceOutputNotice: Hashable, Sendable {
    /// The device.
    public var device: DeviceInfo
    /// Its output now.
    public var status: DeviceOutputStatus
    /// What happened, in a sentence.
    public var message: String
}

/// One device session's output: its twin and grab, driven by the hub on its scheduler
/// (docs/virtual-device.md).
///
/// ```
/// observed ──virtual──▶ twin created ──no key held──▶ grabbed ──write error / panic chord──▶ stopped
///    ▲                      │ (waiting)                  │                         │
///    └──────── observe (reload) ◀───────────────────────┘        reload retries ───┘
/// ```
///
/// Every way out of `waiting` and `grabbed` goes through `stop`: releaseAll on the twin,
/// destroy it, ungrab — so no key stays down on the twin and the physical device is given back
/// last. The raw frames tell it which keys are down on the physical device (the frame of the
/// keys down at open comes first): the grab waits for all of them to be released (evsieve's
/// `grab=auto`), so the release of the Enter that started the daemon is not lost.
///
/// The grab's reconciliation (docs/virtual-device.md, "Around the grab"): frames already
/// queued when EVIOCGRAB took effect reached every other reader too. The grab's time, on the
/// frames' own clock, tells them apart: a frame stamped at or before it is never written to
/// the twin (the desktop had it from the device), and if it pressed a key, the grab is undone
/// at once and waits again (the key's release then reaches the desktop from the device,
/// which would otherwise keep it down forever).
final class SessionOutput: @unchecked Sendable {
    enum Phase: Equatable {
        /// No twin, no grab: the mode is `observe`.
        case observed
        /// The twin exists; grabbing waits for every key and button to be released.
        case waiting
        /// Grabbed: filtered frames go to the twin.
        case grabbed
        /// `virtual`, but stopped (a failure, the panic chord); the status says why. Until a reload.
        case stopped
    }

    let info: DeviceInfo
    let port: (any DeviceOutputPort)?
    /// Whether there is a port: a device without one (a replay) is never grabbed.
    let hasPort: Bool
    private(set) var phase = Phase.observed
    /// Keys and buttons down on the physical device, from the raw frames.
    private(set) var held = Set<UInt16>()
    private var node: String?
    /// When the grab took effect (`DeviceOutputPort.grab`); frames stamped at or before it
    /// reached other readers too. `.max` while not grabbed.
    private(set) var grabbedAt = Int64.max
    /// The panic chord's keys (the configuration's, set again on reload).
    var chord: Set<UInt16>
    private let notify: (DeviceOutputNotice) -> Void

    // Read from any thread (DEVICES, STATE, STATS).
    let status = PosixLocked(DeviceOutputStatus.observed)
    private let written = Atomic<Int>(0)
    private let writeErrors = Atomic<Int>(0)

    init(info: DeviceInfo, port: (any DeviceOutputPort)?, chord: Set<UInt16>,
         notify: @escaping (DeviceOutputNotice) -> Void) {
        self.info = info
        self.port = port
        hasPort = port != nil
        self.chord = chord
        self.notify = notify
    }

    /// Frames written to the twin and failed writes.
    var counters: DeviceOutputCounters {
        DeviceOutputCounters(framesWritten: written.load(ordering: .relaxed), writeErrors: writeErrors.load(ordering: .relaxed))
    }

    /// Whether a twin exists (waiting or grabbed): the device takes part in the panic chord.
    var isActive: Bool { phase == .waiting || phase == .grabbed }

    /// Moves to `mode` (at start and on every reload); `released` when the panic chord is in
    /// force, which keeps every device observed.
    func apply(mode: OutputMode, panicked: Bool) {
        switch mode {
        case .observe:
            if phase == .observed { return }
            let was = phase
            stop()
            phase = .observed
            publish(.observed, was == .stopped ? "output is observe again" : "released: output is observe now; virtual device removed, device ungrabbed")
        case .virtual:
            if isActive { return }
            if panicked {
                publish(DeviceOutputStatus(mode: .virtual, reason: "released by the panic chord"), nil)
                phase = .stopped
                return
            }
            start()
        }
    }

    private func start() {
        guard let port else {
            phase = .stopped
            publish(DeviceOutputStatus(mode: .virtual, reason: "not grabbed: the source has no kernel device (a replay)"),
                    "output virtual ignored: the source has no kernel device")
            return
        }
        if let refusal = port.virtualRefusal {
            phase = .stopped
            publish(DeviceOutputStatus(mode: .virtual, reason: refusal), "output virtual refused: \(refusal); the device stays observed")
            return
        }
        do {
            node = try port.createTwin()
        } catch {
            phase = .stopped
            port.destroyTwin()
            publish(DeviceOutputStatus(mode: .virtual, reason: "not grabbed: the virtual device could not be created: \(error)"),
                    "virtual device could not be created (\(error)); the device stays observed")
            return
        }
        phase = .waiting
        if held.isEmpty { grab() }
        if phase == .waiting {
            publish(DeviceOutputStatus(mode: .virtual, virtualNode: node, grab: .waiting),
                    "virtual device \(node ?? "?") created; grabbing once every key and button is released")
        }
    }

    /// Grabs while `waiting` with nothing held as far as the frames read tell; returns whether
    /// the device is grabbed (false: still waiting, or failed and stopped).
    ///
    /// The frames read lag the kernel by what is still queued, so the kernel's own key state
    /// (`keysDown`) is asked twice (docs/virtual-device.md, "Around the grab"): before the grab
    /// a key down there that no frame read has pressed yet means wait (its frames will come,
    /// and its release retries); just after the grab, a key down means it may have been pressed
    /// before the grab took effect, where the desktop saw it — ungrab at once, before its
    /// release can happen, rather than when its frame is read (by then the release may have
    /// gone to evflowd alone and the desktop would keep the key down).
    @discardableResult
    private func grab() -> Bool {
        guard let port else { return false }
        if let down = port.keysDown(), !down.isEmpty {
            held.formUnion(down)
            return false
        }
        do {
            grabbedAt = try port.grab()
        } catch {
            let reason = error.kind == .busy ? "not grabbed: another program holds a grab (EBUSY)" : "not grabbed: \(error)"
            fail(reason: reason, message: error.kind == .busy
                 ? "not grabbed: another program holds a grab on \(info.devnode ?? "the device") (EBUSY); the device stays observed"
                 : "not grabbed (\(error)); the device stays observed")
            return false
        }
        if let down = port.keysDown(), !down.isEmpty {
            port.ungrab()
            grabbedAt = .max
            held.formUnion(down)
            return false
        }
        phase = .grabbed
        publish(DeviceOutputStatus(mode: .virtual, virtualNode: node, grab: .grabbed),
                "grabbed; applications read the filtered stream from \(node ?? "?")")
        return true
    }

    /// A raw frame, before filtering: follows the keys down; grabs when the last is released
    /// while waiting. Returns whether a key of the panic chord went down on this device while
    /// it has a twin (the hub then checks the chord across devices).
    func observeRaw(_ frame: InputFrame) -> Bool {
        // No port (a replay): the device can never be grabbed, so there is nothing to track.
        guard hasPort else { return false }
        var chordPressed = false
        var pressed = false
        for event in frame.events where event.type == EventType.key {
            if event.value == 0 {
                held.remove(event.code)
            } else {
                if event.value == 1, isActive, chord.contains(event.code) { chordPressed = true }
                if held.insert(event.code).inserted { pressed = true }
            }
        }
        if phase == .waiting && held.isEmpty {
            grab()
        } else if phase == .grabbed && pressed && frame.time <= grabbedAt {
            regrabLater()
        }
        return chordPressed
    }

    /// A frame queued before the grab took effect pressed a key: every other reader saw the
    /// press, and its release would reach only evflowd. Ungrab now (the twin stays, nothing
    /// was written to it since the grab) and grab again once every key is released.
    private func regrabLater() {
        guard let port else { return }
        port.releaseAll()
        port.ungrab()
        phase = .waiting
        grabbedAt = .max
        publish(DeviceOutputStatus(mode: .virtual, virtualNode: node, grab: .waiting),
                "a key pressed just before the grab reached other programs; ungrabbed until every key is released")
    }

    /// A filtered frame: written to the twin while grabbed, if stamped after the grab took
    /// effect. A failed write stops the output.
    func write(_ frame: InputFrame) {
        // Frames stamped before the grab took effect were read by the desktop from the device.
        guard phase == .grabbed, frame.time > grabbedAt, let port else { return }
        do {
            try port.write(frame)
            written.wrappingAdd(1, ordering: .relaxed)
        } catch {
            writeErrors.wrappingAdd(1, ordering: .relaxed)
            fail(reason: "not grabbed: writing to the virtual device failed: \(error)",
                 message: "writing to the virtual device failed (\(error)); released, the device stays observed")
        }
    }

    /// The panic chord: release everything until the next reload.
    func panic() {
        guard isActive else { return }
        stop()
        phase = .stopped
        publish(DeviceOutputStatus(mode: .virtual, reason: "released by the panic chord"),
                "released by the panic chord: virtual device removed, device ungrabbed until the next reload")
    }

    /// The session ends (removal, shutdown, a re-plug): releases whatever it holds.
    func close() {
        guard isActive else { return }   // observed, or stopped: released already
        stop()
        phase = .observed
        publish(status.withLock { $0 }, "released: the device's session ended; virtual device removed")
    }

    private func fail(reason: String, message: String) {
        stop()
        phase = .stopped
        publish(DeviceOutputStatus(mode: .virtual, reason: reason), message)
    }

    /// releaseAll on the twin, then destroy it, then ungrab: nothing stays down on the twin,
    /// and the physical device is given back last.
    private func stop() {
        guard let port else { return }
        port.releaseAll()
        port.destroyTwin()
        port.ungrab()
        node = nil
        grabbedAt = .max
    }

    private func publish(_ new: DeviceOutputStatus, _ message: String?) {
        status.withLock { $0 = new }
        if let message { notify(DeviceOutputNotice(device: info, status: new, message: message)) }
    }
}
