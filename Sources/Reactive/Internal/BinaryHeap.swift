/// A binary min-heap over a contiguous array, ordered by `areInIncreasingOrder`.
@usableFromInline
struct BinaryHeap<Element> {
    @usableFromInline var storage: ContiguousArray<Element> = []
    @usableFromInline let areInIncreasingOrder: (Element, Element) -> Bool

    @inlinable
    init(by areInIncreasingOrder: @escaping (Element, Element) -> Bool) {
        self.areInIncreasingOrder = areInIncreasingOrder
    }

    @inlinable var isEmpty: Bool { storage.isEmpty }
    @inlinable var count: Int { storage.count }
    @inlinable var min: Element? { storage.first }

    @inlinable
    mutating func insert(_ element: Element) {
        storage.append(element)
        var child = storage.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard areInIncreasingOrder(storage[child], storage[parent]) else { break }
            storage.swapAt(child, parent)
            child = parent
        }
    }

    @inlinable
    @discardableResult
    mutating func removeMin() -> Element? {
        guard !storage.isEmpty else { return nil }
        if storage.count == 1 { return storage.removeLast() }
        storage.swapAt(0, storage.count - 1)
        let result = storage.removeLast()
        var parent = 0
        let n = storage.count
        while true {
            let left = 2 * parent + 1
            guard left < n else { break }
            let right = left + 1
            var smallest = left
            if right < n, areInIncreasingOrder(storage[right], storage[left]) { smallest = right }
            guard areInIncreasingOrder(storage[smallest], storage[parent]) else { break }
            storage.swapAt(parent, smallest)
            parent = smallest
        }
        return result
    }
}
