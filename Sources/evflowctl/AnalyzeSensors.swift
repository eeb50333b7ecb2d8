import EvflowProtocol
import Foundation
import InputModel
import NoiseAnalysis
import Pipeline
import Recording

extension Analyze {
    /// `analyze FILE.sensors`: the noise of every channel and a filter suggestion, checked by
    /// running the real filter (`SensorNoiseAnalysis`); `--json` for scripts.
    func analyzeSensors(_ path: String) throws {
        if axes || configOut != nil || html != nil || descriptionPath != nil {
            throw CtlFailure(description: "a sensor recording is analysed without --axes, --config-out, --html or --desc", code: 64)
        }
        let recording: SensorRecording
        do {
            recording = try SensorRecording.read(path: path)
        } catch {
            if case .unreadable = error.reason { throw CtlFailure(description: "\(error)", code: 74) }
            throw CtlFailure(description: "\(error)", code: 65)
        }
        let sensors = recording.sensors.enumerated().map { i, info in
            (info: info, samples: recording.entries.filter { $0.sensor == i }.map(\.sample))
        }
        let reports = SensorNoiseAnalysis.analyze(sensors)
        print(json ? Self.sensorJSON(reports) : Self.sensorText(reports).text, terminator: "")
    }

    /// A value with up to four significant digits.
    static func number(_ v: Double) -> String { String(format: "%.4g", v) }

    static func sensorText(_ reports: [SensorNoiseAnalysis.ChannelReport]) -> TerminalText {
        guard !reports.isEmpty else { return "no channel with enough samples (\(SensorNoiseAnalysis.minimumSamples)) to analyse\n" }
        var out: TerminalText = "Sensor noise per channel (σ from successive differences; the suggestion is checked by running the filter)\n\n"
        var rows: [[String]] = []
        for r in reports {
            let unit = r.unit.isEmpty ? "" : " \(r.unit)"
            func settings(_ s: SensorChannelFilterSettings) -> String {
                var parts: [String] = []
                if s.smoothing != .off { parts.append("\(s.smoothing)") }
                if s.hysteresis > 0 { parts.append("hysteresis \(number(s.hysteresis))\(unit)") }
                if s.relativeHysteresis > 0 { parts.append("relative \(number(s.relativeHysteresis * 100)) %") }
                if s.settle > 0 { parts.append("settle \(s.settle / 1_000_000) ms") }
                if s.outliers.phantomZero { parts.append("phantom zero") }
                if s.outliers.spike > 0 { parts.append("spike \(number(s.outliers.spike))\(unit)") }
                return parts.isEmpty ? "none" : parts.joined(separator: ", ")
            }
            rows.append([("\(r.sensorName) \(r.channel)" as TerminalText).text, "\(r.samples)", "\(r.interval / 1_000_000) ms", "\(number(r.noise))\(unit)",
                         "\(r.spikes) (\(r.phantomZeros) at 0)", "\(settings(r.builtIn)) → \(r.publishedWithBuiltIn)",
                         "\(settings(r.suggested)) → \(r.publishedWithSuggestion)"])
        }
        out += Render.table(["CHANNEL", "SAMPLES", "INTERVAL", "NOISE σ", "SPIKES", "BUILT-IN → PUBLISHED", "SUGGESTED → PUBLISHED"], rows)
        return out
    }

    static func sensorJSON(_ reports: [SensorNoiseAnalysis.ChannelReport]) -> String {
        var w = JSONWriter(capacity: 1024)
        w.beginObject()
        w.key("sensor_channels")
        w.beginArray()
        for r in reports {
            func settings(_ s: SensorChannelFilterSettings) {
                w.beginObject()
                w.key("hysteresis"); w.double(s.hysteresis)
                w.key("relative_hysteresis"); w.double(s.relativeHysteresis)
                w.key("settle_ms"); w.int(s.settle / 1_000_000)
                w.key("phantom_zero"); w.bool(s.outliers.phantomZero)
                w.key("spike"); w.double(s.outliers.spike)
                w.key("smoothing"); w.string("\(s.smoothing)")
                w.endObject()
            }
            w.beginObject()
            w.key("sensor"); w.string(r.sensorID)
            w.key("name"); w.string(r.sensorName)
            w.key("channel"); w.string(r.channel)
            w.key("quantity"); w.string(r.quantity.rawValue)
            w.key("unit"); w.string(r.unit)
            w.key("samples"); w.int(r.samples)
            w.key("interval_ns"); w.int(r.interval)
            w.key("noise"); w.double(r.noise)
            w.key("spikes"); w.int(r.spikes)
            w.key("phantom_zeros"); w.int(r.phantomZeros)
            w.key("built_in"); settings(r.builtIn)
            w.key("published_with_built_in"); w.int(r.publishedWithBuiltIn)
            w.key("suggested"); settings(r.suggested)
            w.key("published_with_suggestion"); w.int(r.publishedWithSuggestion)
            w.endObject()
        }
        w.endArray()
        w.endObject()
        w.endLine()
        return String(decoding: w.bytes, as: UTF8.self)
    }
}
