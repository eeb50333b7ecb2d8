import InputModel
import Testing
@testable import Recording

/// The replay's step order (`ReplaySource.Ranked.ordered`): by time, then rank, then the order
/// the steps were made in — the merge of in-order sources must give exactly what a stable sort
/// of their concatenation gives, and sources out of order must still come out sorted.
@Suite struct ReplayOrderTests {
    typealias Ranked = ReplaySource.Ranked

    /// The reference: a stable sort of the concatenation.
    func stableSort(_ lists: [[Ranked]]) -> [String] {
        lists.joined().enumerated().sorted { a, b in
            if a.element.step.time != b.element.step.time { return a.element.step.time < b.element.step.time }
            return a.element.rank != b.element.rank ? a.element.rank < b.element.rank : a.offset < b.offset
        }.map { describe($0.element.step) }
    }

    func describe(_ step: ReplaySource.Step) -> String {
        switch step.kind {
        case .add: "\(step.time) add d\(step.device)"
        case .frame(let i): "\(step.time) frame d\(step.device)#\(i)"
        case .remove: "\(step.time) remove d\(step.device)"
        case .unplug: "\(step.time) unplug d\(step.device)"
        }
    }

    /// A plain recording device's steps: add at 0 (rank 0), its frames (rank 1), its end (rank 2).
    func device(_ d: Int, frames times: [Int64]) -> [Ranked] {
        [Ranked(.init(time: 0, device: d, kind: .add), rank: 0)]
            + times.enumerated().map { Ranked(.init(time: $1, device: d, kind: .frame($0)), rank: 1) }
            + [Ranked(.init(time: times.last ?? 0, device: d, kind: .remove), rank: 2)]
    }

    @Test func mergingInOrderSourcesGivesTheStableSortsOrder() {
        // Ties everywhere: equal times across devices, a frame at 0 beside the adds, ends at the
        // same time as other devices' frames, five sources (an odd count: one waits a round).
        let lists = [device(0, frames: [0, 10, 10, 20]), device(1, frames: [10, 20]), device(2, frames: []),
                     device(3, frames: [0, 20, 30]), device(4, frames: [5, 10])]
        let merged = Ranked.ordered(lists).map(describe)
        #expect(merged == stableSort(lists))
        #expect(merged.prefix(5) == ["0 add d0", "0 add d1", "0 add d2", "0 add d3", "0 add d4"])
        #expect(merged.count == lists.joined().count)
    }

    @Test func aSourceOutOfOrderIsSortedAsBefore() {
        // Times going backwards inside one recording: the fallback sorts them into time order.
        let lists = [device(0, frames: [30, 10, 20]), device(1, frames: [15])]
        let ordered = Ranked.ordered(lists).map(describe)
        #expect(ordered == stableSort(lists))
        #expect(ordered.contains("10 frame d0#1"))
        #expect(ordered.firstIndex(of: "10 frame d0#1")! < ordered.firstIndex(of: "15 frame d1#0")!)
    }

    @Test func manySourcesOfRandomTimesMatchTheStableSort() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            let count = Int.random(in: 0...9, using: &rng)
            let lists = (0..<count).map { d in
                device(d, frames: (0..<Int.random(in: 0...12, using: &rng)).map { _ in Int64.random(in: 0...6, using: &rng) }.sorted())
            }
            #expect(Ranked.ordered(lists).map(describe) == stableSort(lists))
        }
    }
}
