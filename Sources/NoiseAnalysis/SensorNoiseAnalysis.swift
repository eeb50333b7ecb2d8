import InputModel
import Pipeline

/// Noise per sensor channel in a recording, and a filter suggestion checked by running the
/// real filter (`SensorFilter`) over the samples — the sensors' counterpart of
/// `AxisNoiseAnalysis` (`evflowctl analyze FILE.sensors`).
///
/// - **Noise** (`noise`, one standard deviation in the channel's unit) is estimated from the
///   median absolute difference of successive samples, which a few real level changes do not
///   move: for Gaussian noise `median |xᵢ₊₁ − xᵢ| = 0.6745 · √2 · σ`.
/// - **Spikes**: single samples farther than `spikeFactor` σ from both neighbours, which are
///   close to each other; **phantom zeros**: such a sample at exactly 0 (the lux = 0 after
///   resume).
/// - **Suggestion**: the built-in settings of the channel's quantity, with a hysteresis of
///   `hysteresisFactor` σ (rounded up to two significant digits) when that is larger than the
///   built-in one, the phantom-zero gate when one was seen, and a spike bound of
///   `spikeFactor` σ when a spike was seen. `published…` counts what the filter publishes
///   over the recording with the built-in settings and with the suggestion.
public enum SensorNoiseAnalysis {
    /// Samples farther than this many σ from both neighbours are spikes.
    public static let spikeFactor = 6.0
    /// The suggested hysteresis in σ: noise crosses ±4σ about once in 16,000 samples.
    public static let hysteresisFactor = 4.0
    /// Fewer samples than this give no estimate.
    public static let minimumSamples = 5

    /// One channel's noise and suggestion.
    public struct ChannelReport: Hashable, Sendable {
        /// The sensor.
        public var sensorID: String, sensorName: String
        /// The channel, what it measures, its unit.
        public var channel: String, quantity: SensorQuantity, unit: String
        /// Samples in the recording.
        public var samples: Int
        /// The median time between samples (ns).
        public var interval: Int64
        /// The estimated noise: one standard deviation, in the unit.
        public var noise: Double
        /// Single-sample spikes, and those at exactly 0.
        public var spikes: Int, phantomZeros: Int
        /// The built-in settings of the quantity, and the suggestion.
        public var builtIn: SensorChannelFilterSettings, suggested: SensorChannelFilterSettings
        /// Samples the filter publishes over the recording with each.
        public var publishedWithBuiltIn: Int, publishedWithSuggestion: Int
    }

    /// The report of every channel of `sensors` with at least `minimumSamples` samples.
    public static func analyze(_ sensors: [(info: SensorInfo, samples: [SensorSample])]) -> [ChannelReport] {
        var out: [ChannelReport] = []
        for (info, samples) in sensors where samples.count >= minimumSamples {
            let times = samples.map(\.time)
            let gaps = zip(times.dropFirst(), times).map { $0 - $1 }.sorted()
            let interval = gaps.isEmpty ? 0 : gaps[gaps.count / 2]
            for (i, channel) in info.channels.enumerated() {
                let values = samples.map { i < $0.values.count ? $0.values[i] : .nan }
                guard values.allSatisfy(\.isFinite) else { continue }
                let diffs = zip(values.dropFirst(), values).map { abs($0 - $1) }.sorted()
                let noise = diffs[diffs.count / 2] / (0.6745 * 2.0.squareRoot())
                var spikes = 0, zeros = 0
                let bound = spikeFactor * noise
                for j in 1..<(values.count - 1) where noise > 0 {
                    let (a, x, b) = (values[j - 1], values[j], values[j + 1])
                    if abs(x - a) > bound, abs(x - b) > bound, abs(a - b) <= bound {
                        spikes += 1
                        if x == 0 { zeros += 1 }
                    }
                }
                let builtIn = SensorConfig.builtInChannel(channel.quantity)
                var suggested = builtIn
                let hysteresis = roundUp(hysteresisFactor * noise)
                if hysteresis > suggested.hysteresis { suggested.hysteresis = hysteresis }
                if zeros > 0 { suggested.outliers.phantomZero = true }
                if spikes > zeros { suggested.outliers.spike = max(suggested.outliers.spike, roundUp(bound)) }
                func published(_ s: SensorChannelFilterSettings) -> Int {
                    run(SensorFilterSettings(channels: [channel.name: s]), channel: channel,
                        samples: samples.map { SensorSample(time: $0.time, values: [$0.values[i]]) })
                }
                out.append(ChannelReport(sensorID: info.id.rawValue, sensorName: info.name, channel: channel.name,
                                         quantity: channel.quantity, unit: channel.unit, samples: samples.count,
                                         interval: interval, noise: noise, spikes: spikes, phantomZeros: zeros,
                                         builtIn: builtIn, suggested: suggested,
                                         publishedWithBuiltIn: published(builtIn), publishedWithSuggestion: published(suggested)))
            }
        }
        return out
    }

    /// What the filter publishes over `samples`, its held values delivered at their deadlines
    /// as the live operator's timer would, the last ones after the end.
    static func run(_ settings: SensorFilterSettings, channel: SensorChannel, samples: [SensorSample]) -> Int {
        var filter = SensorFilter(settings: settings, channels: [channel])
        var count = 0
        for sample in samples {
            var steps = 0   // each fire clears what was due; the bound only guards a filter bug
            while let d = filter.nextDeadline, d <= sample.time, steps < 1000 {
                if filter.fire(at: d) != nil { count += 1 }
                steps += 1
            }
            if filter.process(sample) != nil { count += 1 }
        }
        var guardSteps = 0
        while let d = filter.nextDeadline, guardSteps < 1000 {
            if filter.fire(at: d) != nil { count += 1 }
            guardSteps += 1
        }
        return count
    }

    /// `x` rounded up to two significant digits (0 stays 0). Below about 10⁻³⁰⁷ the scale
    /// that would give two digits is beyond `Double`: the result is then the smallest step of
    /// the largest scale at or above `x` (issue #34: the scale grew to +inf and the loop below
    /// never ended, for values differing by 1e-308).
    static func roundUp(_ x: Double) -> Double {
        guard x > 0, x.isFinite else { return 0 }
        var scale = 1.0
        while x * scale < 10, (scale * 10).isFinite { scale *= 10 }
        while x * scale >= 100 { scale /= 10 }
        let rounded = (x * scale).rounded(.up) / scale
        return rounded.isFinite && rounded >= x ? rounded : x
    }
}
