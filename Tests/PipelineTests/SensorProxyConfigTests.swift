import Pipeline
import Testing

/// Issue #29 item 1: the top-level `sensor_proxy` key, off by default.
@Suite("FilterConfig: sensor_proxy (issue #29)")
struct SensorProxyConfigTests {
    @Test("sensor_proxy: off without the key; YAML 1.1's booleans")
    func values() throws {
        #expect(try !FilterConfig.parse(yaml: "version: 1\n").sensorProxy)
        #expect(!FilterConfig().sensorProxy)
        for on in ["true", "on", "yes", "True"] {
            #expect(try FilterConfig.parse(yaml: "sensor_proxy: \(on)\n").sensorProxy, "\(on)")
        }
        for off in ["false", "off", "no"] {
            #expect(try !FilterConfig.parse(yaml: "sensor_proxy: \(off)\n").sensorProxy, "\(off)")
        }
    }

    @Test("a bad sensor_proxy names its line and key", arguments: ["sensor_proxy: 1\n", "sensor_proxy: [true]\n", "sensor_proxy:\n"])
    func refused(_ yaml: String) {
        do {
            _ = try FilterConfig.parse(yaml: "version: 1\n" + yaml)
            Issue.record("accepted \(yaml)")
        } catch {
            #expect(error.line == 2 && error.key == "sensor_proxy" && error.reason == "expected true or false", "\(error)")
        }
    }
}
