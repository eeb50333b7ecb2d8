import EvflowProtocol
import Foundation
import InputModel
import ReactiveTesting
import Testing
@testable import MQTTBridge

private func json(_ j: JSON) throws -> [String: Any] {
    try JSONSerialization.jsonObject(with: Data(j.bytes)) as! [String: Any]
}

let lid: DeviceInfo = {
    var d = DeviceInfo(name: "Lid Switch", inputID: InputID(bustype: 0x19, vendor: 0, product: 5, version: 0), classes: [.switch])
    d.capabilities = [EventType.sw: [0, 1, 5]]   // SW_LID, SW_TABLET_MODE, SW_DOCK
    return d
}()

let keyboard: DeviceInfo = {
    var d = DeviceInfo(name: "Panel \"Keys\"", inputID: InputID(bustype: 3, vendor: 0x1234, product: 0xabcd, version: 1),
                       phys: "usb-1/input0", classes: [.keyboard, .key])
    d.capabilities = [EventType.key: [30, 116], EventType.led: [1]]   // KEY_A, KEY_POWER, LED_CAPSL
    return d
}()

@Suite(.ownLiveResources) struct TopicsTests {
    @Test func defaultLayout() throws {
        let t = try TopicLayout(hostname: "kiosk-7")
        #expect(t.prefix == "evflow/kiosk-7")
        #expect(t.bridgeAvailability == "evflow/kiosk-7/bridge/availability")
        #expect(t.daemonAvailability == "evflow/kiosk-7/evflowd/availability")
        #expect(t.state("0003:046d:c52b-1a2b3c4d") == "evflow/kiosk-7/devices/0003:046d:c52b-1a2b3c4d/state")
        #expect(t.description("0003:046d:c52b-1a2b3c4d#2") == "evflow/kiosk-7/devices/0003:046d:c52b-1a2b3c4d_2/description")
        #expect(t.events("d", type: "EV_KEY", code: "KEY_A") == "evflow/kiosk-7/devices/d/events/EV_KEY/KEY_A")
        #expect(t.discovery(component: "binary_sensor", object: "0003:046d_SW_LID")
                == "homeassistant/binary_sensor/evflow_kiosk-7/0003_046d_sw_lid/config")
    }

    @Test func wildcardsNeverReachATopic() throws {
        let t = try TopicLayout(hostname: "a/b+c#d")
        #expect(t.prefix == "evflow/a_b_c_d")
        #expect(!t.state("x/+#").dropFirst(t.prefix.count).contains { $0 == "+" || $0 == "#" })
    }

    /// Issue #34, finding 7: `segment` compared Swift Characters, and `/` + U+0301 is one
    /// Character that is not `/`: the slash stayed in the topic (an extra level), and `+`/`#`
    /// with a combining mark stayed wildcards (the broker refuses the publish). Checked on the
    /// topic's bytes, as the broker reads them.
    @Test func combiningMarksAfterSlashOrWildcardDoNotSurviveIntoATopic() throws {
        let t = try TopicLayout(hostname: "h\u{301}/x\u{301}")
        #expect(t.prefix.utf8.filter { $0 == UInt8(ascii: "/") }.count == 1, "\(t.prefix)")
        for mark in ["\u{301}", "\u{20DD}", "\u{301}\u{302}", "\u{FE0F}", "\u{200D}"] {
            for reserved in ["/", "+", "#", "\0"] {
                let id = "dev" + reserved + mark + "ice" + reserved + mark
                let segment = TopicLayout.segment(id)
                #expect(!segment.utf8.contains { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "#") || $0 == 0 },
                        "\(id.unicodeScalars.map { String($0.value, radix: 16) }) -> \(segment.debugDescription)")
                // Exactly the fixed levels: prefix (2) + devices + id + state.
                let topic = t.state(id)
                #expect(topic.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).count == 5)
                #expect(TopicLayout.segment(id).unicodeScalars.filter { $0 == "_" }.count == 2)
                if reserved != "\0" {
                    #expect(throws: ConfigError.self) { try TopicLayout(hostname: "h", prefix: reserved == "/" ? reserved + mark + "a" : "a" + reserved + mark) }
                }
            }
        }
        #expect(throws: ConfigError.self) { try TopicLayout(hostname: "h", prefix: "a\0b") }
    }

    @Test("issue #34: an over-long id is cut to a bounded segment, and two that share a beginning stay apart")
    func overLongSegmentsAreBoundedAndDistinct() throws {
        let t = try TopicLayout(hostname: "h", prefix: String(repeating: "p", count: 32_000))
        let a = String(repeating: "é", count: 40_000) + "a", b = String(repeating: "é", count: 40_000) + "b"
        #expect(TopicLayout.segment(a).utf8.count <= TopicLayout.maxSegmentBytes)
        #expect(TopicLayout.segment(a) != TopicLayout.segment(b))
        #expect(TopicLayout.segment(a).unicodeScalars.allSatisfy { $0 == "é" || $0 == "~" || $0.properties.isASCIIHexDigit })
        #expect(t.events(a, type: String(repeating: "T", count: 70_000), code: "KEY_A").utf8.count <= 65_535)
        #expect(TopicLayout.segment("short/id") == "short_id", "short text is only mapped, never cut")
    }

    @Test func badPrefixesAreRefusedWithTheOptionName() {
        for bad in ["", "a/#", "a/+/b", "/a", "a/"] {
            #expect(throws: ConfigError.self) { try TopicLayout(hostname: "h", prefix: bad) }
        }
        do {
            _ = try TopicLayout(hostname: "h", prefix: "fleet/#")
            Issue.record("accepted a wildcard")
        } catch {
            #expect(error.description.contains("--prefix"))
        }
    }
}

@Suite(.ownLiveResources) struct DocumentsTests {
    @Test func stateDocument() throws {
        let r = DeviceStateReport(device: keyboard, keysDown: [116, 30], abs: [0: -3], switches: [:], leds: [1: 1],
                                  lastEventTime: 42,
                                  counters: DeviceCounters(framesIn: 10, eventsIn: 20, framesOut: 8, eventsOut: 15, synDropped: 1,
                                                           droppedByFilter: ["key-debounce": 4, "abs-hysteresis": 1]))
        let doc = Documents.state(r)
        #expect(doc.text == #"{"device":"0003:1234:abcd-"# + keyboard.id.rawValue.split(separator: "-").last! + #"","keys_down":["KEY_A","KEY_POWER"],"switches":{},"leds":{"LED_CAPSL":1},"abs":{"ABS_X":-3},"last_event":42,"counters":{"frames_in":10,"events_in":20,"frames_out":8,"events_out":15,"syn_dropped":1,"dropped_total":5,"dropped":{"abs-hysteresis":1,"key-debounce":4},"chatter":{}}}"#)
    }

    @Test func descriptionDocumentEscapesAndNamesCapabilities() throws {
        let o = try json(Documents.description(keyboard, hostname: "pos-3"))
        #expect(o["name"] as? String == "Panel \"Keys\"")
        #expect(o["host"] as? String == "pos-3")
        #expect(o["vendor"] as? String == "1234")
        #expect(o["classes"] as? [String] == ["key", "keyboard"])
        let caps = o["capabilities"] as! [String: [String]]
        #expect(caps["EV_KEY"] == ["KEY_A", "KEY_POWER"])
        #expect(caps["EV_LED"] == ["LED_CAPSL"])
    }

    @Test func controlCharactersAreEscaped() {
        #expect(JSON.string("a\u{1}\n\"\\").text == #""a\u0001\n\"\\""#)
    }

    /// The bridge had its own writer, which escaped DEL (0x7f) as `\u007f` where the socket
    /// (JSONWriter) sends it as is: the same device name came out as two different strings.
    @Test func namesAreEscapedExactlyAsTheSocketEscapesThem() {
        let name = "Evil\u{7f}\u{1b}[2J\u{0}é\"\\\t"
        #expect(JSON.string(name).bytes == JSONWriter.encodedString(name))
        #expect(JSON.object([("name", .string(name))]).text == "{\"name\":" + String(decoding: JSONWriter.encodedString(name), as: UTF8.self) + "}")
    }
}

@Suite(.ownLiveResources) struct DiscoveryTests {
    let layout = try! TopicLayout(hostname: "panel")

    @Test func switchesBecomeBinarySensors() throws {
        let entities = Discovery(counters: false).entities(for: lid, layout: layout)
        #expect(entities.map(\.component) == ["binary_sensor", "binary_sensor", "binary_sensor"])
        let byName = Dictionary(uniqueKeysWithValues: try entities.map { (try json($0.config)["name"] as! String, try json($0.config)) })
        let l = try #require(byName["Lid"])
        #expect(l["device_class"] as? String == "opening")
        #expect(l["state_topic"] as? String == layout.state(lid.id.rawValue))
        #expect(l["value_template"] as? String == "{{ 'ON' if value_json.switches.get('SW_LID', 1) == 0 else 'OFF' }}")
        #expect(l["availability_mode"] as? String == "all")
        #expect((l["availability"] as? [[String: String]])?.map { $0["topic"]! } == [layout.bridgeAvailability, layout.daemonAvailability])
        #expect(byName["Dock"]?["device_class"] as? String == "plug")
        #expect(byName["Tablet mode"]?["device_class"] == nil)
        #expect(byName["Tablet mode"]?["value_template"] as? String == "{{ 'ON' if value_json.switches.get('SW_TABLET_MODE', 0) == 1 else 'OFF' }}")
        let ids = Set(try entities.map { try json($0.config)["unique_id"] as! String })
        #expect(ids.count == 3)
    }

    @Test func chosenKeysOnlyForDevicesThatHaveThem() throws {
        let d = Discovery(keys: [116, 272], counters: true)   // KEY_POWER, BTN_LEFT
        let kb = d.entities(for: keyboard, layout: layout)
        #expect(kb.filter { $0.component == "binary_sensor" }.count == 1)
        let power = try json(kb.first { $0.component == "binary_sensor" }!.config)
        #expect(power["value_template"] as? String == "{{ 'ON' if 'KEY_POWER' in value_json.keys_down else 'OFF' }}")
        let sensors = try kb.filter { $0.component == "sensor" }.map { try json($0.config) }
        #expect(sensors.map { $0["value_template"] as! String }.sorted() == [
            "{{ value_json.counters.dropped_total }}", "{{ value_json.counters.events_in }}",
            "{{ value_json.counters.events_out }}", "{{ value_json.counters.syn_dropped }}"])
        #expect(sensors.allSatisfy { $0["state_class"] as? String == "total_increasing" })
        #expect(d.entities(for: lid, layout: layout).filter { $0.component == "binary_sensor" }.count == 3)
    }
}

@Suite(.ownLiveResources) struct EventStreamSpecTests {
    @Test func parsesTheSocketsFilters() throws {
        let s = try EventStreamSpec(parsing: "devices=keyboard;types=EV_KEY,EV_SW;codes=BTN_LEFT;max-rate=50;per-code")
        #expect(s.perCode)
        #expect(s.watch.maxRate == 50)
        #expect(s.watch.events.types == [1, 5])
        #expect(s.watch.events.codes == [EventCode(type: 1, code: 272)])
        #expect(s.watch.devices == [DeviceSelector(parsing: "keyboard")])
    }

    @Test func badSpecsSayWhatIsWrong() {
        for (spec, words) in [("types=EV_KYE", "unknown event type 'EV_KYE'"), ("max-rate=fast", "max-rate needs a number"),
                              ("max-rate=0", "max_rate"), ("colour=red", "unknown item 'colour'"),
                              ("per-code=yes", "per-code takes no value"), ("codes=KEY_QQ", "unknown event code 'KEY_QQ'")] {
            do {
                _ = try EventStreamSpec(parsing: spec)
                Issue.record("accepted \(spec)")
            } catch {
                #expect(error.description.contains(words), "\(spec): \(error)")
            }
        }
    }
}
