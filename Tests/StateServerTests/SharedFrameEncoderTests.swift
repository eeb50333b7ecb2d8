import InputModel
import Testing
@testable import EvflowProtocol
@testable import StateServer

/// `SharedFrameEncoder`: one encode per distinct (device, frame), the bytes of a writer of
/// one's own, nothing for a frame without events.
struct SharedFrameEncoderTests {
    let shape = WatchShape(stream: .raw, selection: .all, keys: .visible)
    let device = DeviceID(rawValue: "0003:1234:0099-00000001")
    let other = DeviceID(rawValue: "0003:1234:0099-00000002")

    func frame(_ value: Int32, at time: Int64) -> InputFrame {
        InputFrame(time: time, events: [InputEvent(time: time, type: EventType.rel, code: 1, value: value)])
    }

    func expected(_ device: DeviceID, _ frame: InputFrame) -> [UInt8] {
        var writer = MessageWriter()
        _ = writer.appendFrame(device: device, stream: .raw, frame: frame)
        return writer.bytes
    }

    @Test func theSameFrameIsEncodedOnceAndAnyOtherAgain() {
        let encoder = SharedFrameEncoder(shape: shape, names: .standard)
        let a = frame(3, at: 1_000), b = frame(3, at: 2_000), c = frame(4, at: 2_000)
        #expect(encoder.encode(device: device, frame: a) == expected(device, a))
        #expect(encoder.encode(device: device, frame: a) == expected(device, a))
        #expect(encoder.counts == (1, 1))
        // Another time, another value, another device: each is encoded again.
        #expect(encoder.encode(device: device, frame: b) == expected(device, b))
        #expect(encoder.encode(device: device, frame: c) == expected(device, c))
        #expect(encoder.encode(device: other, frame: c) == expected(other, c))
        #expect(encoder.counts == (4, 1))
        // Back to an earlier frame: only the last one is kept, so it is encoded again, rightly.
        #expect(encoder.encode(device: device, frame: a) == expected(device, a))
        #expect(encoder.counts == (5, 1))
    }

    @Test func bytesHeldByACallerDoNotChangeWhenTheNextFrameIsEncoded() {
        let encoder = SharedFrameEncoder(shape: shape, names: .standard)
        let a = frame(1, at: 1_000), b = frame(22, at: 3_000)
        let held = encoder.encode(device: device, frame: a)
        #expect(encoder.encode(device: device, frame: b) == expected(device, b))
        #expect(held == expected(device, a))
    }

    @Test func aFrameWithoutEventsHasNoMessage() {
        let encoder = SharedFrameEncoder(shape: shape, names: .standard)
        #expect(encoder.encode(device: device, frame: InputFrame(time: 5, events: [])) == nil)
        #expect(encoder.encode(device: device, frame: InputFrame(time: 5, events: [])) == nil)
        #expect(encoder.encode(device: device, frame: frame(1, at: 6)) == expected(device, frame(1, at: 6)))
    }

    @Test func watchesOfOneShapeShareAnEncoderThatGoesWithTheLastOfThem() {
        let encoders = SharedFrameEncoders(names: .standard)
        var first: SharedFrameEncoder? = encoders.encoder(for: shape)
        var second: SharedFrameEncoder? = encoders.encoder(for: shape)
        let filtered = encoders.encoder(for: WatchShape(stream: .filtered, selection: .all, keys: .visible))
        #expect(first === second)
        #expect(first !== filtered)
        #expect(encoders.inUse.count == 2)
        first = nil
        #expect(encoders.inUse.count == 2)
        second = nil
        withExtendedLifetime(filtered) {
            #expect(encoders.inUse.keys.map(\.stream) == [.filtered])
        }
    }
}
