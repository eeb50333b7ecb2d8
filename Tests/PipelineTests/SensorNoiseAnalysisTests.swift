import Foundation
import InputModel
@testable import NoiseAnalysis
@testable import Pipeline
import Recording
import Testing

/// `SensorNoiseAnalysis` (`evflowctl analyze FILE.sensors`) over the sensor fixtures.
@Suite struct SensorNoiseAnalysisTests {
    static func read(_ name: String) throws -> [(info: SensorInfo, samples: [SensorSample])] {
        let r = try SensorRecording.read(path: Fixtures.root.appendingPathComponent("sensors/" + name).path)
        return r.sensors.enumerated().map { i, info in (info, r.entries.filter { $0.sensor == i }.map(\.sample)) }
    }

    @Test func theLightSensorsPhantomZeroIsFoundAndTheSuggestionPublishesOnlyTheTrueChange() throws {
        let reports = SensorNoiseAnalysis.analyze(try Self.read("als-phantom-zero.sensors"))
        let r = try #require(reports.first)
        #expect(reports.count == 1)
        #expect(r.channel == "illuminance" && r.unit == "lx" && r.samples == 50 && r.interval == 100_000_000)
        #expect(r.noise > 1 && r.noise < 4)        // ±3 lx uniform noise: σ ≈ 1.7
        #expect(r.spikes == 1 && r.phantomZeros == 1)
        #expect(r.suggested.outliers.phantomZero)
        #expect(r.suggested.hysteresis == SensorNoiseAnalysis.roundUp(4 * r.noise))
        #expect(r.publishedWithSuggestion == 2)   // ~120 lx, then ~400 lx: no phantom, no noise
    }

    @Test func theAccelerometersNoiseNeedsAHysteresisTheBuiltInMedianLacks() throws {
        let reports = SensorNoiseAnalysis.analyze(try Self.read("accel-tilt-45.sensors"))
        #expect(reports.map(\.channel) == ["accel_x", "accel_y", "accel_z"])
        for r in reports {
            #expect(r.spikes == 0)
            #expect(r.suggested.smoothing == .median(3))             // the built-in kept
            #expect(r.suggested.hysteresis > 0.3)
            #expect(r.publishedWithBuiltIn > 30)                      // the median alone passes the noise
            #expect(r.publishedWithSuggestion <= 2)                   // the first level and the turn
        }
    }

    @Test func tooFewSamplesGiveNoReport() {
        let info = SensorInfo(id: DeviceID(rawValue: "s"), name: "s", sysname: "iio:device0",
                              channels: [SensorChannel(name: "temp", quantity: .temp)], buffered: false)
        #expect(SensorNoiseAnalysis.analyze([(info, (0..<4).map { SensorSample(time: Int64($0), values: [20]) })]).isEmpty)
    }
}
