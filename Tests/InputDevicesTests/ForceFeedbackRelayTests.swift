import CEvdev
@testable import InputDevices
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The force-feedback relay without a kernel: a fake physical device that numbers effects in
/// its own slots, as the input core does (the uinput round trip runs in the daemon suite's
/// `rumble` case, Tests/E2EDaemon).
@Suite("ForceFeedbackRelay: the twin's effect ids mapped to the physical device's")
struct ForceFeedbackRelayTests {
    /// A physical device with `slots` effect slots, some of them taken by another program.
    final class FakePad: ForceFeedbackTarget {
        var slots: [ff_effect?]
        var log: [String] = []
        var failErase: Int32 = 0
        var failUpload: Int32 = 0

        init(slots: Int, takenByOthers: [Int] = []) {
            self.slots = Array(repeating: nil, count: slots)
            for slot in takenByOthers { self.slots[slot] = ff_effect() }
        }

        func upload(_ effect: inout ff_effect) -> Int32 {
            if failUpload != 0 {
                log.append("upload \(effect.id) failed")
                return failUpload
            }
            if effect.id == -1 {
                guard let free = slots.firstIndex(where: { $0 == nil }) else { return -ENOSPC }
                effect.id = Int16(free)
            } else if Int(effect.id) >= slots.count || slots[Int(effect.id)] == nil {
                return -EINVAL
            }
            slots[Int(effect.id)] = effect
            log.append("upload \(effect.id) strong \(effect.u.rumble.strong_magnitude)")
            return 0
        }

        func erase(_ id: Int16) -> Int32 {
            log.append("erase \(id)")
            if failErase != 0 { return failErase }
            guard Int(id) < slots.count, slots[Int(id)] != nil else { return -EINVAL }
            slots[Int(id)] = nil
            return 0
        }
    }

    static func rumble(twinID: Int16, strong: UInt16) -> uinput_ff_upload {
        var request = uinput_ff_upload()
        request.request_id = 7
        request.effect.type = UInt16(FF_RUMBLE)
        request.effect.id = twinID
        request.effect.u.rumble.strong_magnitude = strong
        request.effect.replay.length = 500
        return request
    }

    static func event(_ type: Int32, _ code: Int32, _ value: Int32) -> input_event {
        var ev = input_event()
        ev.type = UInt16(type)
        ev.code = UInt16(code)
        ev.value = value
        return ev
    }

    @Test("a new effect is uploaded as new (-1) and its twin id maps to the slot the device gave; an update goes to that slot; plays use the device's id")
    func uploadUpdateAndPlay() {
        var relay = ForceFeedbackRelay()
        let pad = FakePad(slots: 4, takenByOthers: [0, 1])
        var first = Self.rumble(twinID: 0, strong: 0x8000)
        relay.upload(&first, to: pad)
        #expect(first.retval == 0)
        #expect(relay.effects == [0: 2], "the twin's slot 0 is the pad's slot 2 (0 and 1 belong to another program)")
        var update = Self.rumble(twinID: 0, strong: 0xffff)
        relay.upload(&update, to: pad)
        #expect(update.retval == 0)
        #expect(relay.effects == [0: 2])
        #expect(pad.log == ["upload 2 strong 32768", "upload 2 strong 65535"])
        #expect(update.effect.id == 0, "the request keeps the twin's id: the kernel checks it at UI_END_FF_UPLOAD")

        let play = relay.translate(Self.event(EV_FF, 0, 1))
        #expect(play.map { [Int32($0.type), Int32($0.code), $0.value] } == [EV_FF, 2, 1])
        let stop = relay.translate(Self.event(EV_FF, 0, 0))
        #expect(stop.map { [Int32($0.code), $0.value] } == [2, 0])
    }

    @Test("FF_GAIN and FF_AUTOCENTER pass unchanged; a play of an id never uploaded, and anything not EV_FF, is dropped")
    func settingsAndStrangers() {
        var relay = ForceFeedbackRelay()
        let pad = FakePad(slots: 2)
        var request = Self.rumble(twinID: 3, strong: 1)
        relay.upload(&request, to: pad)
        let gain = relay.translate(Self.event(EV_FF, FF_GAIN, 0x4000))
        #expect(gain.map { [Int32($0.code), $0.value] } == [FF_GAIN, 0x4000])
        let center = relay.translate(Self.event(EV_FF, FF_AUTOCENTER, 0))
        #expect(center.map { Int32($0.code) } == FF_AUTOCENTER)
        #expect(relay.translate(Self.event(EV_FF, 1, 1)) == nil, "twin id 1 was never uploaded")
        #expect(relay.translate(Self.event(EV_LED, 3, 1)) == nil)
        #expect(relay.translate(Self.event(EV_FF, 3, 1)).map { Int32($0.code) } == 0)
    }

    @Test("a failed upload returns the device's error and maps nothing; a failed update keeps the old mapping")
    func failedUploads() {
        var relay = ForceFeedbackRelay()
        let pad = FakePad(slots: 1)
        var first = Self.rumble(twinID: 0, strong: 1)
        relay.upload(&first, to: pad)
        var full = Self.rumble(twinID: 1, strong: 1)
        relay.upload(&full, to: pad)
        #expect(full.retval == -ENOSPC, "the pad's one slot is taken: its ENOSPC reaches the game")
        #expect(relay.effects == [0: 0])
        pad.failUpload = -EIO
        var update = Self.rumble(twinID: 0, strong: 2)
        relay.upload(&update, to: pad)
        #expect(update.retval == -EIO)
        #expect(relay.effects == [0: 0])
    }

    @Test("an erase goes to the device's id and unmaps it; a failed erase keeps it (the twin keeps the effect too); an unknown id has nothing to erase")
    func erase() {
        var relay = ForceFeedbackRelay()
        let pad = FakePad(slots: 4, takenByOthers: [0])
        var a = Self.rumble(twinID: 0, strong: 1)
        var b = Self.rumble(twinID: 1, strong: 2)
        relay.upload(&a, to: pad)
        relay.upload(&b, to: pad)
        #expect(relay.effects == [0: 1, 1: 2])

        pad.failErase = -EIO
        var failing = uinput_ff_erase(request_id: 3, retval: 0, effect_id: 1)
        relay.erase(&failing, on: pad)
        #expect(failing.retval == -EIO)
        #expect(relay.effects == [0: 1, 1: 2])

        pad.failErase = 0
        var erase = uinput_ff_erase(request_id: 4, retval: 0, effect_id: 1)
        relay.erase(&erase, on: pad)
        #expect(erase.retval == 0)
        #expect(relay.effects == [0: 1])
        #expect(pad.slots[2] == nil)
        #expect(relay.translate(Self.event(EV_FF, 1, 1)) == nil, "an erased effect is no longer played")

        pad.log = []
        var unknown = uinput_ff_erase(request_id: 5, retval: -1, effect_id: 6)
        relay.erase(&unknown, on: pad)
        #expect(unknown.retval == 0)
        #expect(pad.log.isEmpty)
    }

    @Test("when the twin goes every effect uploaded through it is erased from the device, and only those")
    func eraseAll() {
        var relay = ForceFeedbackRelay()
        let pad = FakePad(slots: 4, takenByOthers: [1])
        for twinID: Int16 in [0, 1, 2] {
            var request = Self.rumble(twinID: twinID, strong: 1)
            relay.upload(&request, to: pad)
        }
        #expect(relay.effects == [0: 0, 1: 2, 2: 3])
        pad.log = []
        #expect(relay.eraseAll(on: pad) == 3)
        #expect(pad.log == ["erase 0", "erase 2", "erase 3"])
        #expect(pad.slots[1] != nil, "another program's effect stays")
        #expect(relay.effects.isEmpty)
        // A device already gone: the relay forgets its effects all the same.
        var again = Self.rumble(twinID: 0, strong: 1)
        relay.upload(&again, to: pad)
        pad.failErase = -ENODEV
        #expect(relay.eraseAll(on: pad) == 0)
        #expect(relay.effects.isEmpty)
    }
}
