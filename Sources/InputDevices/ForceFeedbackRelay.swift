import CEvdev
#if canImport(Glibc)
import Glibc
#endif

/// What the force-feedback relay asks of the physical device: the live one makes the evdev
/// ioctls and writes (`EvdevOutputPort`), a test fakes them.
protocol ForceFeedbackTarget {
    /// Uploads `effect` (`EVIOCSFF`): its `id` is the device's id of the effect to replace, or
    /// -1 for a new one, whose id the device sets. Returns 0 or a negative errno.
    func upload(_ effect: inout ff_effect) -> Int32
    /// Erases the effect the device knows as `id` (`EVIOCRMFF`). Returns 0 or a negative errno.
    func erase(_ id: Int16) -> Int32
}

/// The force-feedback half of a twin (docs/virtual-device.md, "Force feedback"): the effects a
/// game uploads to the twin are uploaded to the physical device, and the twin's effect ids are
/// mapped to the physical device's both ways.
///
/// The ids differ: the twin's input core gives an uploaded effect the twin's first free slot
/// before uinput hands the request to evflowd, and the physical device's input core gives it
/// the physical device's first free slot (other programs may hold effects there too). So the
/// relay keeps `effects` (twin id → physical id), fills it on every successful upload, empties
/// an entry on a successful erase, translates play/stop (`EV_FF`, code = the twin's id) to the
/// physical id, and erases everything it uploaded when the twin goes (`eraseAll`).
///
/// No system call here: the caller reads the requests from the twin's `/dev/uinput` fd, makes
/// the uinput ioctls and passes the physical device as a `ForceFeedbackTarget`.
struct ForceFeedbackRelay {
    /// The effects uploaded through the twin: the twin's id → the physical device's id.
    private(set) var effects: [Int16: Int16] = [:]

    /// Answers a `UI_FF_UPLOAD` request (filled by `UI_BEGIN_FF_UPLOAD`): uploads its effect to
    /// `target` under the physical id the twin's id maps to (-1, a new effect, when it maps to
    /// none) and sets the request's `retval` to the device's answer, which the game's
    /// `EVIOCSFF` on the twin returns. On success the twin's id maps to the id the device gave.
    /// A failed update leaves the old effect on both devices, as the kernel does.
    mutating func upload(_ request: inout uinput_ff_upload, to target: some ForceFeedbackTarget) {
        let twinID = request.effect.id
        var effect = request.effect
        effect.id = effects[twinID] ?? -1
        let rc = target.upload(&effect)
        if rc == 0 { effects[twinID] = effect.id }
        request.retval = rc
    }

    /// Answers a `UI_FF_ERASE` request (filled by `UI_BEGIN_FF_ERASE`): erases the physical
    /// effect the twin's id maps to and sets `retval` to the device's answer. On success the
    /// mapping goes; on a failure it stays, as the effect stays on the twin (its input core keeps
    /// an effect whose erase failed). An id that maps to nothing (never uploaded through this
    /// relay) has nothing to erase: 0.
    mutating func erase(_ request: inout uinput_ff_erase, on target: some ForceFeedbackTarget) {
        let twinID = Int16(truncatingIfNeeded: request.effect_id)
        guard let physical = effects[twinID] else {
            request.retval = 0
            return
        }
        let rc = target.erase(physical)
        if rc == 0 { effects[twinID] = nil }
        request.retval = rc
    }

    /// The `EV_FF` event a game wrote to the twin (it comes back on the `/dev/uinput` fd), as
    /// the physical device must get it: play/stop of an effect (code = the twin's id, value =
    /// the repeat count, 0 stops) with the physical id; `FF_GAIN` and `FF_AUTOCENTER` (device
    /// settings, not effects) unchanged. Nil for an id that maps to no uploaded effect, and for
    /// anything that is not `EV_FF`.
    func translate(_ event: input_event) -> input_event? {
        guard event.type == UInt16(EV_FF) else { return nil }
        if event.code == UInt16(FF_GAIN) || event.code == UInt16(FF_AUTOCENTER) { return event }
        guard let physical = effects[Int16(truncatingIfNeeded: event.code)] else { return nil }
        var out = event
        out.code = UInt16(truncatingIfNeeded: physical)
        return out
    }

    /// Erases every effect uploaded through the twin from `target` (the twin is going; erasing
    /// also stops an effect still playing) and forgets them all, whatever the device answers: a
    /// device already gone (ENODEV) has dropped them itself. Returns how many were erased.
    @discardableResult
    mutating func eraseAll(on target: some ForceFeedbackTarget) -> Int {
        defer { effects = [:] }
        var erased = 0
        for physical in effects.values.sorted() where target.erase(physical) == 0 { erased += 1 }
        return erased
    }
}
