import Foundation
import Testing
import InputModel

@Suite struct DeviceIDTests {
    let trackpoint = InputID(bustype: 0x0003, vendor: 0x17ef, product: 0x6047, version: 0x0111)
    let name = "Lenovo ThinkPad Compact USB Keyboard with TrackPoint"
    let phys = "usb-0000:00:14.0-2/input0"

    @Test func stableAcrossRunsAndReplugs() {
        let a = DeviceID(name: name, inputID: trackpoint, phys: phys, uniq: nil)
        let b = DeviceID(name: name, inputID: trackpoint, phys: phys, uniq: nil)
        #expect(a == b)
        // Pinned: the id must not change between evflow versions (configs and clients store it).
        // Computed independently (FNV-1a 32 over the parts, 0xff after each part).
        #expect(a.rawValue == "0003:17ef:6047-247c0778")
        // The event node is not part of the id.
        let info1 = DeviceInfo(name: name, inputID: trackpoint, phys: phys, devnode: "/dev/input/event3")
        let info2 = DeviceInfo(name: name, inputID: trackpoint, phys: phys, devnode: "/dev/input/event9")
        #expect(info1.id == info2.id && info1.id == a)
    }

    @Test func distinctWhenIdentityDiffers() {
        let base = DeviceID(name: name, inputID: trackpoint, phys: phys, uniq: nil)
        var otherVersion = trackpoint; otherVersion.version = 0x0112
        var otherProduct = trackpoint; otherProduct.product = 0x6048
        let variants = [
            DeviceID(name: name + " Mouse", inputID: trackpoint, phys: phys, uniq: nil),
            DeviceID(name: name, inputID: trackpoint, phys: "usb-0000:00:14.0-3/input0", uniq: nil),
            DeviceID(name: name, inputID: trackpoint, phys: phys, uniq: "SN1"),
            DeviceID(name: name, inputID: otherVersion, phys: phys, uniq: nil),
            DeviceID(name: name, inputID: otherProduct, phys: phys, uniq: nil),
            DeviceID(name: name, inputID: trackpoint, phys: nil, uniq: nil),
        ]
        #expect(Set(variants + [base]).count == variants.count + 1)
    }

    @Test func partBoundariesMatter() {
        let id = InputID(bustype: 6, vendor: 1, product: 2, version: 1)
        // Moving text between adjacent parts must change the id.
        #expect(DeviceID(name: "ab", inputID: id, phys: "c", uniq: nil)
                != DeviceID(name: "a", inputID: id, phys: "bc", uniq: nil))
        #expect(DeviceID(name: "x", inputID: id, phys: "", uniq: "y")
                != DeviceID(name: "x", inputID: id, phys: "y", uniq: ""))
    }

    @Test func textFormAndCodable() throws {
        let id = DeviceID(name: "evflow test keyboard",
                          inputID: InputID(bustype: 6, vendor: 0x1d6b, product: 0x101, version: 1),
                          phys: nil, uniq: nil)
        let parts = id.rawValue.split(separator: "-")
        #expect(parts.count == 2 && parts[0] == "0006:1d6b:0101" && parts[1].count == 8)
        #expect(parts[1].allSatisfy { $0.isHexDigit && !$0.isUppercase })
        let data = try JSONEncoder().encode([id])
        #expect(String(decoding: data, as: UTF8.self) == "[\"\(id.rawValue)\"]")
        #expect(try JSONDecoder().decode([DeviceID].self, from: data) == [id])
    }
}
