import InputModel
import Reactive
import ReactiveTesting
import Recording
import Testing

/// Ids in a replay follow the daemon's rule (`DeviceID.distinct`, docs/protocol.md §3): a
/// device whose id an earlier device of the replay has gets the first free `#2`, `#3`...
@Suite("ReplaySource ids", .ownLiveResources)
struct ReplayIDTests {
    static let key = DeviceInfo(name: "Replay key", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1),
                                capabilities: [EventType.key: [30]])
    static let events = [InputEvent(time: 1_000, type: EventType.key, code: 30, value: 1),
                         InputEvent(time: 1_000, type: EventType.syn, code: SynCode.report, value: 0)]

    static func streamed(recordings: [Recording] = [], sessions: [Session] = []) -> (infos: [DeviceID], streams: [DeviceID]) {
        let scheduler = VirtualTimeScheduler()
        let replay = ReplaySource(recordings: recordings, sessions: sessions, scheduler: scheduler)
        var streams: [DeviceID] = []
        let subscription = replay.devices.subscribe(onNext: { stream in
            streams.append(stream.info.id)
            _ = stream.frames.subscribe(onNext: { _ in })
        })
        scheduler.run()
        subscription.dispose()
        scheduler.run()   // the replay stops on its scheduler
        return (replay.infos.map(\.id), streams)
    }

    @Test("two identical recorded devices: X and X#2, on their streams too")
    func identicalDevices() {
        let device = RecordedDevice(info: Self.key, events: Self.events)
        let (infos, streams) = Self.streamed(recordings: [Recording(devices: [device]), Recording(devices: [device])])
        let x = Self.key.id
        #expect(infos == [x, DeviceID(rawValue: x.rawValue + "#2")])
        #expect(streams == infos)
    }

    @Test("a suffix an earlier device already holds is skipped: a recorded X, then a session's X#2 and X give X, X#2, X#3 (the per-id count gave the session's X X#2 as well: two devices, one id)")
    func takenSuffixIsSkipped() {
        let x = Self.key.id, x2 = DeviceID(rawValue: x.rawValue + "#2"), x3 = DeviceID(rawValue: x.rawValue + "#3")
        var named = Self.key
        named.id = x2
        let session = Session(devices: [SessionDevice(handle: "k2", info: named), SessionDevice(handle: "k", info: Self.key)],
                              appearances: [SessionAppearance(device: 0, added: 0, removed: nil, events: Self.events),
                                            SessionAppearance(device: 1, added: 0, removed: nil, events: Self.events)])
        let device = RecordedDevice(info: Self.key, events: Self.events)
        let (infos, streams) = Self.streamed(recordings: [Recording(devices: [device])], sessions: [session])
        #expect(infos == [x, x2, x3])
        #expect(Set(streams) == Set(infos) && streams.count == 3)
    }

    @Test("DeviceID.distinct: the id itself when free, else the first free suffix")
    func distinctRule() {
        let x = DeviceID(rawValue: "0003:0001:0002-0000abcd")
        #expect(x.distinct { _ in false } == x)
        #expect(x.distinct { $0 == x } == DeviceID(rawValue: x.rawValue + "#2"))
        let taken: Set<DeviceID> = [x, DeviceID(rawValue: x.rawValue + "#2"), DeviceID(rawValue: x.rawValue + "#4")]
        #expect(x.distinct(isTaken: taken.contains) == DeviceID(rawValue: x.rawValue + "#3"))
    }
}
