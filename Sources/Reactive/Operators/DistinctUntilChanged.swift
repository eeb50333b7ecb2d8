extension ObservableType where Element: Equatable {
    /// Drops elements equal to the previous element passed on.
    ///
    /// Element: the first element, then each element `!=` the last one passed on.
    /// Completion and error: passed through. Disposal: disposes the source. Scheduler: none.
    @inlinable
    public func distinctUntilChanged() -> Observable<Element> {
        let source = self
        return Observable { observer in
            let last = StateBox<Element?>(nil)
            return source.subscribe(AnyObserver<Element> { event in
                if case .next(let element) = event {
                    if let previous = last.value, previous == element { return }
                    last.value = element
                }
                observer.on(event)
            })
        }
    }
}

extension ObservableType {
    /// Drops elements whose key equals the key of the previous element passed on.
    @inlinable
    public func distinctUntilChanged<Key: Equatable>(_ keySelector: @escaping (Element) -> Key) -> Observable<Element> {
        distinctUntilChanged(keySelector, comparer: ==)
    }

    /// Drops elements that `comparer` calls equal to the previous element passed on.
    @inlinable
    public func distinctUntilChanged(_ comparer: @escaping (Element, Element) -> Bool) -> Observable<Element> {
        distinctUntilChanged({ $0 }, comparer: comparer)
    }

    /// Drops elements whose key `comparer` calls equal to the previous passed-on key.
    ///
    /// The comparison is always against the last element *passed on*, not the last one seen:
    /// with a hysteresis comparer (`abs(a - b) <= fuzz`) a slow drift is still reported once
    /// it exceeds the fuzz.
    @inlinable
    public func distinctUntilChanged<Key>(_ keySelector: @escaping (Element) -> Key,
                                          comparer: @escaping (Key, Key) -> Bool) -> Observable<Element> {
        let source = self
        return Observable { observer in
            let lastKey = StateBox<Key?>(nil)
            return source.subscribe(AnyObserver<Element> { event in
                if case .next(let element) = event {
                    let key = keySelector(element)
                    if let previous = lastKey.value, comparer(previous, key) { return }
                    lastKey.value = key
                }
                observer.on(event)
            })
        }
    }
}
