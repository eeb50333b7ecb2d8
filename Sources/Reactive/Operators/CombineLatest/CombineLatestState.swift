/// The combineLatest bookkeeping for `count` sources, free of threads and element types:
/// which sources have emitted, which have completed, and what to do next.
@usableFromInline
struct CombineLatestState {
    @usableFromInline
    enum Completion {
        case none
        /// Every source completed, or one completed without ever emitting.
        case complete
    }

    @usableFromInline var hasValue: [Bool]
    @usableFromInline var isDone: [Bool]
    @usableFromInline var valueCount = 0
    @usableFromInline var doneCount = 0

    @inlinable
    init(count: Int) {
        hasValue = Array(repeating: false, count: count)
        isDone = Array(repeating: false, count: count)
    }

    /// Records an element of source `index`; true once every source has one.
    @inlinable
    mutating func onNext(_ index: Int) -> Bool {
        if !hasValue[index] {
            hasValue[index] = true
            valueCount += 1
        }
        return valueCount == hasValue.count
    }

    /// Records the completion of source `index`.
    @inlinable
    mutating func onCompleted(_ index: Int) -> Completion {
        if !isDone[index] {
            isDone[index] = true
            doneCount += 1
        }
        // A source that never emitted means no combination can ever be produced.
        if !hasValue[index] || doneCount == isDone.count { return .complete }
        return .none
    }
}
