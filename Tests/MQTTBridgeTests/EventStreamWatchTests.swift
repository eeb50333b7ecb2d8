import EvflowProtocol
import Reactive
import ReactiveTesting
import Testing
@testable import MQTTBridge

/// An event stream naming a device that is not plugged in yet: evflowd refuses its `WATCH`
/// (issue #34: an id or name that selects nothing is an ERROR, no longer a silent empty
/// stream), so the bridge asks again until the device is there, as the stream used to wait.
@Suite(.ownLiveResources) struct EventStreamWatchTests {
    let request = Request(.watch(WatchRequest(devices: [.name("Later keyboard")])), tag: .string("evflow-mqtt events"))
    let absent = ErrorReply(ProtocolError(.unmatchedDevice("Later keyboard"), requestClass: "WATCH"))

    @Test("a devices refusal: the WATCH is sent again every interval on the same connection, logged the first time only, until accepted")
    func devicesRefusalIsRetried() {
        let scheduler = VirtualTimeScheduler()
        let watch = EventStreamWatch(request, every: .seconds(30), scheduler: scheduler)
        let daemon = FakeDaemon()
        watch.connected(daemon)
        #expect(daemon.requests == [request])
        #expect(watch.refused(absent) == .first)
        scheduler.advance(by: .seconds(29))
        #expect(daemon.requests.count == 1)
        scheduler.advance(by: .seconds(1))
        #expect(daemon.requests == [request, request])
        #expect(watch.refused(absent) == .again)
        scheduler.advance(by: .seconds(30))
        #expect(daemon.requests.count == 3)
        // Accepted this time (no refusal): nothing more is sent.
        scheduler.advance(by: .seconds(300))
        #expect(daemon.requests.count == 3)
        watch.retry.dispose()
    }

    @Test("other refusals are final; a new connection sends afresh, and a resend pending for the old one is dropped")
    func otherRefusalsAndReconnects() {
        let scheduler = VirtualTimeScheduler()
        let watch = EventStreamWatch(request, every: .seconds(30), scheduler: scheduler)
        let old = FakeDaemon(), new = FakeDaemon()
        watch.connected(old)
        #expect(watch.refused(ErrorReply(ProtocolError(.hiddenKeyCode("KEY_A"), requestClass: "WATCH"))) == .final)
        scheduler.advance(by: .seconds(60))
        #expect(old.requests.count == 1)
        #expect(watch.refused(absent) == .first)
        watch.connected(new)
        scheduler.advance(by: .seconds(60))
        #expect(old.requests.count == 1, "nothing more on the old connection")
        #expect(new.requests == [request])
        #expect(watch.refused(absent) == .first, "logged again on the new connection")
        watch.retry.dispose()
        scheduler.run()
    }
}
