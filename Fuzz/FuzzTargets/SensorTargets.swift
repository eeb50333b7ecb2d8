import InputModel
import NoiseAnalysis
import Pipeline
import Recording

// The targets of issue #34: the sensor recording format (`# EVFLOW SENSORS 1`,
// docs/formats/sensors.md) and the configuration's `sensors:` section (docs/sensors.md).

extension FuzzTarget {
    // MARK: sensor recordings

    /// Sample times are replayed from a clock this far on (73 years of uptime: the largest a
    /// replay's start may be for `RecordingLimits.maxTimeNanoseconds` to keep its sums in range).
    static let lateClock = RecordingLimits.maxTimeNanoseconds

    /// `SensorRecording.parse`: a rejection names the file and a line it has; a recording that
    /// parses holds times from 0 to `RecordingLimits.maxTimeNanoseconds` in order, distinct
    /// channel names, one value per channel, and round-trips through `written()` (parse →
    /// write → parse gives the same recording, NaN for NaN; writing again the same bytes). Its
    /// samples then go through the noise analysis (`evflowctl analyze`) and, at a clock
    /// `lateClock` on, through each sensor's built-in filters with every deadline fired — to
    /// an end, without trapping.
    func checkSensorRecording(_ bytes: [UInt8]) throws(InvariantFailure) {
        let recording: SensorRecording
        do {
            recording = try SensorRecording.parse(bytes, file: Self.fileName)
        } catch {
            try checkRejection(error, lines: Self.lineCount(bytes))
            return
        }
        for sensor in recording.sensors where Set(sensor.channels.map(\.name)).count != sensor.channels.count {
            throw fail("sensor '\(sensor.name)' has a channel name twice: \(sensor.channels.map(\.name))")
        }
        var previous: Int64 = 0
        for entry in recording.entries {
            let t = entry.sample.time
            guard t >= previous, t <= RecordingLimits.maxTimeNanoseconds else {
                throw fail("sample time \(t) after \(previous) (limit \(RecordingLimits.maxTimeNanoseconds))")
            }
            previous = t
            guard entry.sample.values.count == recording.sensors[entry.sensor].channels.count else {
                throw fail("a sample of \(entry.sample.values.count) values for \(recording.sensors[entry.sensor].channels.count) channels")
            }
        }
        let written = recording.written()
        let reread: SensorRecording
        do {
            reread = try SensorRecording.parse(Array(written.utf8), file: "rewritten")
        } catch {
            throw fail("written() does not parse: \(error)\n" + written)
        }
        guard Self.sameSamples(reread, recording) else {
            throw fail("round trip through written() changed the recording:\n  before \(recording)\n  after  \(reread)")
        }
        guard reread.written() == written else { throw fail("writing the re-read recording again gives other text") }

        let perSensor = recording.sensors.indices.map { i in
            (info: recording.sensors[i], samples: recording.entries.filter { $0.sensor == i }.map(\.sample))
        }
        _ = SensorNoiseAnalysis.analyze(perSensor)
        let config = FilterConfig()
        for (info, samples) in perSensor {
            try runSensorFilter(config.sensorSettings(for: info), info: info,
                                samples: samples.map { SensorSample(time: Self.lateClock + $0.time, values: $0.values) },
                                what: "sensor '\(info.name)'")
        }
    }

    /// Equal recordings, a NaN value equal to a NaN (the written text keeps no payload or sign).
    static func sameSamples(_ a: SensorRecording, _ b: SensorRecording) -> Bool {
        guard a.sensors == b.sensors, a.entries.count == b.entries.count else { return false }
        return zip(a.entries, b.entries).allSatisfy { x, y in
            x.sensor == y.sensor && x.sample.time == y.sample.time && x.sample.values.count == y.sample.values.count
                && zip(x.sample.values, y.sample.values).allSatisfy { $0 == $1 || ($0.isNaN && $1.isNaN) }
        }
    }

    /// Runs `samples` through a `SensorFilter` with `settings`, firing every deadline due before
    /// each sample and then the rest, as the operator's timer would: deadlines are never
    /// before the first sample (a wrapped sum would be), and the run ends (bounded: a filter
    /// that kept a deadline for ever would be a finding).
    func runSensorFilter(_ settings: SensorFilterSettings, info: SensorInfo, samples: [SensorSample],
                         what: String) throws(InvariantFailure) {
        var filter = SensorFilter(settings: settings, channels: info.channels)
        var orientation = settings.orientation.map(OrientationState.init)
        let start = samples.first?.time ?? 0
        func deliver(_ sample: SensorSample?) {
            guard let sample, sample.values.count >= 3, orientation != nil else { return }
            _ = orientation!.on(x: sample.values[0], y: sample.values[1], z: sample.values[2])
        }
        var fired = 0
        for sample in samples {
            while let deadline = filter.nextDeadline, deadline <= sample.time {
                guard deadline >= start, fired < 100_000 else {
                    throw fail("\(what): deadline \(deadline) (first sample at \(start), \(fired) fired)")
                }
                deliver(filter.fire(at: deadline))
                fired += 1
            }
            deliver(filter.process(sample))
        }
        var after = 0
        while let deadline = filter.nextDeadline {
            guard deadline >= start, after < 64 else {
                throw fail("\(what): deadline \(deadline) after the last sample (\(after) fired)")
            }
            deliver(filter.fire(at: deadline))
            after += 1
        }
    }

    // MARK: the sensors: section

    /// The text before the fuzzed section: the input is the body of `sensors:`.
    static let sensorConfigHead = "version: 1\nsensors:\n"

    /// Probe sensors of every quantity (an accelerometer with the three axes the orientation
    /// needs), with the names and udev properties the seeds' rules match on.
    static let sensorProbes: [SensorInfo] = SensorQuantity.allCases.enumerated().map { i, quantity in
        let channels = quantity == .accel
            ? ["accel_x", "accel_y", "accel_z"].map { SensorChannel(name: $0, quantity: .accel) }
            : [SensorChannel(name: quantity.rawValue, quantity: quantity)]
        return SensorInfo(id: DeviceID(rawValue: "iio-\(i)"), name: i % 2 == 0 ? "als-\(quantity.rawValue)" : quantity.rawValue,
                          sysname: "iio:device\(i)", properties: ["ID_PATH": "platform-\(i)"],
                          channels: channels, buffered: i % 2 == 0)
    }

    /// `FilterConfig.parse(yaml:)` of `sensorConfigHead` + the input: a rejection is a
    /// ConfigError naming the file and a line the text has, or a key; an accepted section
    /// parses the same twice, gives every probe sensor settings in their documented ranges,
    /// and its filters run (values from 1e-308 to 1e308, NaN and infinite ones, at a clock
    /// `lateClock` on) to an end.
    func checkSensorConfig(_ bytes: [UInt8]) throws(InvariantFailure) {
        let text = Self.sensorConfigHead + String(decoding: bytes, as: UTF8.self)
        let config: FilterConfig
        do {
            config = try FilterConfig.parse(yaml: text, file: Self.fileName)
        } catch {
            guard error.file == Self.fileName else { throw fail("error names file \(String(describing: error.file))") }
            guard error.line != nil || !error.key.isEmpty else { throw fail("error names no line or key: \(error)") }
            if let line = error.line {
                let lines = Self.yamlLineCount(Array(text.utf8))
                guard line >= 1, line <= lines + 1 else { throw fail("error line \(line) outside 1...\(lines + 1): \(error)") }
            }
            return
        }
        guard (try? FilterConfig.parse(yaml: text, file: Self.fileName)) == config else {
            throw fail("parsing the same text twice gave different configurations")
        }
        _ = config.checkSummary
        let values: [Double] = [0, 1e-308, 5e-324, 1, 0, 0, 120.5, -3, 1e308, .infinity, 9.8, .nan, 400, 400, 0, 2e-308]
        for info in Self.sensorProbes {
            let settings = config.sensorSettings(for: info)
            for channel in info.channels {
                let s = settings.channels[channel.name] ?? settings.fallback
                try checkRanges(s, what: "\(info.name).\(channel.name)")
            }
            guard settings.minInterval >= 0, settings.minInterval <= FilterConfig.maxIntervalNanoseconds else {
                throw fail("\(info.name): max_rate gives an interval of \(settings.minInterval) ns")
            }
            if let o = settings.orientation {
                guard (0...40).contains(o.hysteresis), (0...80).contains(o.flatAngle), (0.05...1).contains(o.gravityTolerance) else {
                    throw fail("\(info.name): orientation \(o) outside its documented ranges")
                }
            }
            var time = Self.lateClock
            let samples = values.enumerated().map { i, v in
                time += Int64(i % 4) * 7_000_000 + (i == 8 ? 3_000_000_000 : 0)
                return SensorSample(time: time, values: info.channels.indices.map { c in c == 2 && i % 3 == 0 ? 9.8 : v })
            }
            try runSensorFilter(settings, info: info, samples: samples, what: info.name)
        }
    }

    /// One channel's settings in the ranges docs/sensors.md gives.
    private func checkRanges(_ s: SensorChannelFilterSettings, what: String) throws(InvariantFailure) {
        let durations: ClosedRange<Int64> = 0...FilterConfig.maxIntervalNanoseconds
        guard (0...1e9).contains(s.hysteresis), s.relativeHysteresis >= 0, s.relativeHysteresis <= 10,
              (0...1e9).contains(s.outliers.spike), s.outliers.relativeSpike >= 0, s.outliers.relativeSpike <= 10,
              durations.contains(s.settle), durations.contains(s.outliers.confirmTimeout), (1...1000).contains(s.smoothing.count) else {
            throw fail("\(what): settings \(s) outside their documented ranges")
        }
    }
}
