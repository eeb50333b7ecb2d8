import InputModel

/// The members that several messages share: a device's description, code values, counts.
extension MessageWriter {
    /// `{"NAME":value,...}` for codes of one type, ascending by code.
    mutating func writeCodeValues(_ values: [UInt16: Int32], type: UInt16) {
        json.beginObject()
        for (code, value) in values.sorted(by: { $0.key < $1.key }) {
            json.key(names.codeKey(type: type, code: code))
            json.int(Int64(value))
        }
        json.endObject()
    }

    /// `{"name":count,...}`, ascending by name.
    mutating func writeCounts(_ counts: [String: UInt64]) {
        json.beginObject()
        for (name, n) in counts.sorted(by: { $0.key < $1.key }) {
            json.key(name)
            json.uint(n)
        }
        json.endObject()
    }

    static func hex4(_ v: UInt16) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 4 - s.count) + s
    }

    /// A device's `output` member (1.3): mode, twin, grab state, why not grabbed.
    mutating func writeOutput(_ o: DeviceOutputStatus) {
        json.key("output")
        json.beginObject()
        json.key("mode"); json.string(o.mode.rawValue)
        if let node = o.virtualNode { json.key("virtual_node"); json.string(node) }
        json.key("grab"); json.string(o.grab.rawValue)
        if let reason = o.reason { json.key("reason"); json.string(reason) }
        json.endObject()
    }

    /// A device summary, or with `detail` the full description (§4 STATE).
    mutating func writeDevice(_ d: DeviceInfo, detail: Bool) {
        json.beginObject()
        json.key("id"); json.string(d.id.rawValue)
        json.key("name"); json.string(d.name)
        json.key("bus"); json.string(Self.hex4(d.inputID.bustype))
        json.key("vendor"); json.string(Self.hex4(d.inputID.vendor))
        json.key("product"); json.string(Self.hex4(d.inputID.product))
        json.key("version"); json.string(Self.hex4(d.inputID.version))
        if let p = d.phys { json.key("phys"); json.string(p) }
        if let u = d.uniq { json.key("uniq"); json.string(u) }
        if let n = d.devnode { json.key("devnode"); json.string(n) }
        json.key("classes")
        json.beginArray()
        for c in d.classes.sorted() { json.string(c.rawValue) }
        json.endArray()
        if let o = d.output { writeOutput(o) }
        if let g = d.gestures { writeGestures(g) }
        if let b = d.battery { writeBattery(b) }
        if detail {
            json.key("capabilities")
            json.beginObject()
            for (type, codes) in d.capabilities.sorted(by: { $0.key < $1.key }) {
                json.key(names.typeKey(type))
                json.beginArray()
                for code in codes.sorted() { names.writeCode(type: type, code: code, to: &json) }
                json.endArray()
            }
            json.endObject()
            json.key("abs_info")
            json.beginObject()
            for (code, a) in d.absInfo.sorted(by: { $0.key < $1.key }) {
                json.key(names.codeKey(type: EventType.abs, code: code))
                json.beginObject()
                json.key("value"); json.int(Int64(a.value))
                json.key("min"); json.int(Int64(a.minimum))
                json.key("max"); json.int(Int64(a.maximum))
                json.key("fuzz"); json.int(Int64(a.fuzz))
                json.key("flat"); json.int(Int64(a.flat))
                json.key("resolution"); json.int(Int64(a.resolution))
                json.endObject()
            }
            json.endObject()
            json.key("props")
            json.beginArray()
            for p in d.inputProperties.sorted() {
                if let name = names.naming.propertyName(p) { json.string(name) } else { json.int(Int64(p)) }
            }
            json.endArray()
            json.key("udev")
            json.beginObject()
            for (k, v) in d.properties.sorted(by: { $0.key < $1.key }) {
                json.key(k)
                json.string(v)
            }
            json.endObject()
        }
        json.endObject()
    }
}
