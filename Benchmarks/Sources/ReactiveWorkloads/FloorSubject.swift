/// The floor's subject: what one would write by hand with no framework — a list of
/// closures, each called in turn for every value; a subscription is an id removed on
/// dispose. Not generic (every workload sends Int), closures wrapped in a struct so the
/// array stores them unabstracted (a bare closure element costs a reabstraction thunk per
/// call, measured with callgrind). It still pays one retain/release of the closure context
/// per call, which evflow's subject avoids (docs/benchmarks.md).
final class FloorSubject {
    private struct Call {
        let call: (Int) -> Void
    }

    private var calls: ContiguousArray<Call> = []
    private var ids: ContiguousArray<Int> = []
    private var nextID = 0

    init() {}

    @inline(__always)
    func send(_ value: Int) {
        // A local copy holds the array during the calls.
        let calls = self.calls
        for entry in calls { entry.call(value) }
    }

    func subscribe(_ call: @escaping (Int) -> Void) -> Int {
        let id = nextID
        nextID += 1
        calls.append(Call(call: call))
        ids.append(id)
        return id
    }

    func unsubscribe(_ id: Int) {
        if let index = ids.firstIndex(of: id) {
            ids.remove(at: index)
            calls.remove(at: index)
        }
    }
}
