import InputModel

/// A device's output around a suspend (docs/virtual-device.md, "Suspend and resume"): before
/// sleep nothing stays down on the twin, after resume the twin holds what the device holds.
extension SessionOutput {
    /// Before sleep: a release of every key and button held on the twin, then a `SYN_REPORT`
    /// (`releaseAll`), so no application keeps a key down through the sleep. The twin and the
    /// grab stay. Returns whether there was a twin to release (the output is active).
    func releaseForSleep() -> Bool {
        guard isActive, let port else { return false }
        port.releaseAll()
        return true
    }

    /// After resume: what the hub did for one device.
    enum ResumeOutcome: Equatable {
        /// No twin (observed, stopped, or no port): nothing to do.
        case inactive
        /// The device's keys could not be read (it is gone or closed): its session is ending.
        case unreadable
        /// The keys and buttons down on the device now; the twin (when grabbed) and the raw key
        /// state were set to them.
        case reconciled(down: Set<UInt16>)
    }

    /// After resume: reads the keys down on the physical device now (`keysDown`, the kernel's
    /// state, not what has been read of it) and makes the twin and the raw key state agree.
    ///
    /// Grabbed: one frame to the twin releasing every key and button of the device that is not
    /// down (the kernel drops a release of a key that is not down on the twin, so only the keys
    /// the twin still holds change) and pressing every one that is down (a press of a key the
    /// twin already holds is dropped the same way): twin == hardware, with no release and
    /// re-press of a key held throughout. Waiting: the twin gets nothing (applications read the
    /// device until the grab), and the grab happens now if nothing is down. The raw key state
    /// (`held`, which the grab waits on) is corrected through `observeRaw` with the edges it
    /// missed; a panic chord is judged on real frames only, so its answer is ignored.
    func reconcileAfterResume(at time: Int64) -> ResumeOutcome {
        guard isActive, let port else { return .inactive }
        guard let down = port.keysDown() else { return .unreadable }
        if phase == .grabbed {
            let codes = (info.capabilities[EventType.key] ?? []).union(held).union(down)
            let events = codes.sorted().map { code in
                InputEvent(time: time, type: EventType.key, code: code, value: down.contains(code) ? 1 : 0)
            }
            if !events.isEmpty { write(InputFrame(time: time, events: events)) }
        }
        let missed = held.subtracting(down).sorted().map { InputEvent(time: time, type: EventType.key, code: $0, value: 0) }
            + down.subtracting(held).sorted().map { InputEvent(time: time, type: EventType.key, code: $0, value: 1) }
        if !missed.isEmpty {
            _ = observeRaw(InputFrame(time: time, events: missed))
        }
        return .reconciled(down: down)
    }
}
