import InputModel
import SensorProxy
import Testing

/// The D-Bus service's pure state (issue #29 item 1): claims, the sensors serving each kind,
/// and the properties iio-sensor-proxy's clients read.
@Suite("sensor proxy state (issue #29)") struct SensorProxyTests {
    static func sensor(_ id: String, _ channels: [(String, SensorQuantity)], properties: [String: String] = [:]) -> SensorInfo {
        SensorInfo(id: DeviceID(rawValue: id), name: id, sysname: "iio:" + id, properties: properties,
                   channels: channels.map { SensorChannel(name: $0.0, quantity: $0.1) }, buffered: false)
    }

    static let accel = sensor("accel", [("accel_x", .accel), ("accel_y", .accel), ("accel_z", .accel)])
    static let als = sensor("als", [("illuminance", .illuminance)])
    static let prox = sensor("prox", [("proximity", .proximity)], properties: ["PROXIMITY_NEAR_LEVEL": "100"])

    static func names(_ changes: [(name: String, value: ProxyValue)]) -> [String] { changes.map(\.name) }

    @Test("method names: Claim/Release of each kind, nothing else")
    func methods() {
        #expect(ProxySensorKind.method("ClaimAccelerometer")! == (.accelerometer, true))
        #expect(ProxySensorKind.method("ReleaseLight")! == (.light, false))
        #expect(ProxySensorKind.method("ClaimProximity")! == (.proximity, true))
        #expect(ProxySensorKind.method("ClaimCompass") == nil)
        #expect(ProxySensorKind.method("claimlight") == nil)
    }

    @Test("claims are per name, not counted: the first claim starts reading, the last release or departure stops it")
    func claims() {
        var book = ClaimBook()
        do { let r = book.claim(.light, by: ":1.1"); #expect(r) }
        do { let r = book.claim(.light, by: ":1.1"); #expect(!r) }      // twice: still one claim
        do { let r = book.claim(.light, by: ":1.2"); #expect(!r) }
        do { let r = book.release(.light, by: ":1.1"); #expect(!r) }    // :1.2 still claims
        #expect(book.isClaimed(.light))
        do { let r = book.release(.light, by: ":1.9"); #expect(!r) }    // no claim: nothing
        do { let r = book.release(.light, by: ":1.2"); #expect(r) }
        #expect(!book.isClaimed(.light))
        _ = book.claim(.accelerometer, by: ":1.3")
        _ = book.claim(.light, by: ":1.3")
        _ = book.claim(.light, by: ":1.4")
        #expect(book.holds(":1.3") && !book.holds(":1.5"))
        do { let r = book.vanished(":1.3"); #expect(r == [.accelerometer]) }   // light still claimed by :1.4
        #expect(!book.holds(":1.3"))
        #expect(book.names(.light) == [":1.4"])
        do { let r = book.vanished(":1.5"); #expect(r == []) }
    }

    @Test("a sensor is read only while its kind is claimed; a claim before the sensor comes, and across its removal, holds")
    func reading() {
        var state = ProxyState()
        state.claim(.light, by: ":1.1")
        #expect(state.reading.isEmpty)                       // claimed, no sensor yet
        do { let r = state.added(Self.als); #expect(Self.names(r) == ["HasAmbientLight"]) }
        #expect(state.reading == [.light: Self.als.id])
        _ = state.added(Self.accel)
        #expect(state.reading == [.light: Self.als.id])     // the accelerometer is not claimed
        do { let r = state.removed(Self.als.id); #expect(Self.names(r) == ["HasAmbientLight"]) }
        #expect(state.reading.isEmpty)
        _ = state.added(Self.als)
        #expect(state.reading == [.light: Self.als.id])     // back: read again for the same claim
        do { let r = state.vanished(":1.1"); #expect(r) }
        #expect(state.reading.isEmpty)
        do { let r = state.vanished(":1.1"); #expect(!r) }                     // no claims left: none of ours
    }

    @Test("orientation: the upright ones as they are; flat, none or unknown keep the last; undefined before any")
    func orientation() {
        var state = ProxyState()
        _ = state.added(Self.accel)
        #expect(state.properties.accelerometerOrientation == "undefined")
        do { let r = state.sample(.accelerometer, of: Self.accel.id, values: [0, 0, 9.8], orientation: "face-up"); #expect(r.isEmpty) }
        #expect(state.properties.accelerometerOrientation == "undefined")
        let changes = state.sample(.accelerometer, of: Self.accel.id, values: [9.8, 0, 0], orientation: "right-up")
        #expect(Self.names(changes) == ["AccelerometerOrientation"] && changes.first?.value == .string("right-up"))
        for kept in ["face-down", "face-up", nil, "undefined", "sideways"] as [String?] {
            do { let r = state.sample(.accelerometer, of: Self.accel.id, values: [0, 0, 9.8], orientation: kept); #expect(r.isEmpty) }
            #expect(state.properties.accelerometerOrientation == "right-up")
        }
        for name in ["normal", "bottom-up", "left-up"] {
            _ = state.sample(.accelerometer, of: Self.accel.id, values: [], orientation: name)
            #expect(state.properties.accelerometerOrientation == name)
        }
        // A sample of a sensor that does not serve the kind changes nothing.
        do { let r = state.sample(.accelerometer, of: Self.als.id, values: [1], orientation: "normal"); #expect(r.isEmpty) }
    }

    @Test("light: the level of the illuminance channel in lux, else intensity in vendor units; equal levels change nothing")
    func light() {
        var state = ProxyState()
        let both = Self.sensor("rgb", [("intensity_both", .intensity), ("illuminance", .illuminance)])
        _ = state.added(both)
        #expect(state.properties.lightLevelUnit == "lux")
        do { let r = state.sample(.light, of: both.id, values: [7, 250], orientation: nil); #expect(r.map(\.value) == [.double(250)]) }
        do { let r = state.sample(.light, of: both.id, values: [8, 250], orientation: nil); #expect(r.isEmpty) }
        do { let r = state.sample(.light, of: both.id, values: [8, .nan], orientation: nil); #expect(r.isEmpty) }
        var vendor = ProxyState()
        let raw = Self.sensor("raw", [("intensity", .intensity)])
        do { let r = vendor.added(raw); #expect(Self.names(r) == ["HasAmbientLight", "LightLevelUnit"]) }
        #expect(vendor.properties.lightLevelUnit == "vendor")
    }

    @Test("proximity: near above the near level, with iio-sensor-proxy's 10 % margin; no near level, no proximity")
    func proximity() {
        var state = ProxyState()
        _ = state.added(Self.prox)
        #expect(state.properties.hasProximity)
        let near = { (level: Double) -> Bool in
            _ = state.sample(.proximity, of: Self.prox.id, values: [level], orientation: nil)
            return state.properties.proximityNear
        }
        #expect(!near(50))
        #expect(!near(105))   // from below: must pass 110
        #expect(near(111))
        #expect(near(95))     // from above: must fall under 90
        #expect(!near(89))
        var without = ProxyState()
        _ = without.added(Self.sensor("p", [("proximity", .proximity)]))
        #expect(!without.properties.hasProximity && without.chosen[.proximity] == nil)
    }

    @Test("choice: the first sensor of each kind; the display's accelerometer before the base's")
    func choice() {
        let base = Self.sensor("base", Self.accel.channels.map { ($0.name, $0.quantity) }, properties: ["ACCEL_LOCATION": "base"])
        let chosen = ProxySensors.choose([base, Self.als, Self.accel, Self.sensor("als2", [("illuminance", .illuminance)])])
        #expect(chosen[.accelerometer]?.info.id == Self.accel.id)
        #expect(chosen[.light]?.info.id == Self.als.id)
        #expect(ProxySensors.choose([base])[.accelerometer]?.info.id == base.id)
    }

    @Test("the near level: udev's PROXIMITY_NEAR_LEVEL, else the driver's in_proximity_nearlevel; neither: no proximity")
    func nearLevel() {
        var sysfs = Self.sensor("prox2", [("proximity", .proximity)])
        sysfs.proximityNearLevel = 220
        #expect(ProxySensors.choose([sysfs])[.proximity]?.nearLevel == 220)
        var both = Self.prox
        both.proximityNearLevel = 220
        #expect(ProxySensors.choose([both])[.proximity]?.nearLevel == 100, "udev's first")
        var badUdev = Self.sensor("prox3", [("proximity", .proximity)], properties: ["PROXIMITY_NEAR_LEVEL": "0"])
        badUdev.proximityNearLevel = 220
        #expect(ProxySensors.choose([badUdev])[.proximity]?.nearLevel == 220, "a property that is no level falls back to sysfs")
        #expect(ProxySensors.choose([Self.sensor("prox4", [("proximity", .proximity)])])[.proximity] == nil)
        // The level decides "near" as the property's does: above 1.1 × from below.
        var p = ProxyProperties()
        p.proximity(230, nearLevel: 220)
        #expect(!p.proximityNear)
        p.proximity(243, nearLevel: 220)
        #expect(p.proximityNear)
    }

    @Test("properties: GetAll's names and types in the interface's order; changes list only what differs")
    func properties() {
        let all = ProxyProperties().all
        #expect(all.map(\.name) == ["HasAccelerometer", "AccelerometerOrientation", "HasAmbientLight", "LightLevelUnit",
                                    "LightLevel", "HasProximity", "ProximityNear"])
        #expect(all.map(\.value.signature).joined() == "bsbsdbb")
        #expect(ProxyProperties().value(of: "LightLevel") == .double(0))
        #expect(ProxyProperties().value(of: "CompassHeading") == nil)
        var p = ProxyProperties()
        p.light(3)
        #expect(p.changes(since: ProxyProperties()).map(\.name) == ["LightLevel"])
        #expect(ProxyInterface.introspection.contains("<property name=\"AccelerometerOrientation\" type=\"s\" access=\"read\"/>"))
        #expect(ProxyInterface.introspection.contains("<method name=\"ReleaseProximity\"/>"))
    }
}
