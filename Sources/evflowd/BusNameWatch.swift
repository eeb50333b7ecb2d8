import CSystemd

/// Follows unique bus names (`:1.42`) until they leave the bus, as GLib's `g_bus_watch_name`
/// does for iio-sensor-proxy: per name, a `NameOwnerChanged` match on that name alone (so
/// evflowd is not woken by every other connection coming and going on the system bus), then
/// a `GetNameOwner`. The bus handles a connection's messages in order: a name that left before
/// the match was in place answers `GetNameOwner` with an error, one that leaves later sends
/// the signal — either way `vanished` is called, once, and the name is no longer watched.
///
/// On the bus's thread (the input loop, `BusConnection`); `close()` before the object goes.
final class BusNameWatch {
    /// One watched name: its match and its `GetNameOwner` in flight (owned slots: unreferencing
    /// one cancels it). The callbacks' userdata, kept alive by `entries`.
    private final class Entry {
        let name: String
        weak var watch: BusNameWatch?
        var match: OpaquePointer?
        var query: OpaquePointer?

        init(name: String, watch: BusNameWatch) {
            self.name = name
            self.watch = watch
        }

        func cancel() {
            if let match { sd_bus_slot_unref(match) }
            if let query { sd_bus_slot_unref(query) }
            match = nil
            query = nil
        }
    }

    /// Borrowed: the `BusConnection` owns it and outlives this watch.
    private let bus: OpaquePointer
    private let vanished: (String) -> Void
    private var entries: [String: Entry] = [:]

    /// A watch on `bus` calling `vanished` with each watched name that leaves it.
    init(bus: OpaquePointer, vanished: @escaping (String) -> Void) {
        self.bus = bus
        self.vanished = vanished
    }

    deinit {
        precondition(entries.isEmpty, "BusNameWatch deallocated without close()")
    }

    /// Watches `name` (nothing if it is already). False when the match or the query could not
    /// be sent: the name is then not watched.
    @discardableResult
    func watch(_ name: String) -> Bool {
        if entries[name] != nil { return true }
        // Unique names are `:` and digits and dots: nothing to quote in a match rule.
        guard name.hasPrefix(":"), name.utf8.allSatisfy({ $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") || (48...57).contains($0) })
        else { return false }
        let entry = Entry(name: name, watch: self)
        let userdata = Unmanaged.passUnretained(entry).toOpaque()
        let rule = "type='signal',sender='org.freedesktop.DBus',path='/org/freedesktop/DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(name)'"
        var rc = sd_bus_add_match_async(bus, &entry.match, rule, { message, userdata, _ in
            guard let message else { return 0 }
            let entry = Unmanaged<Entry>.fromOpaque(userdata!).takeUnretainedValue()
            // (name, old owner, new owner): an empty new owner is the name leaving.
            _ = BusMessage.readString(message)
            _ = BusMessage.readString(message)
            if BusMessage.readString(message) == "" { entry.watch?.gone(entry.name) }
            return 0
        }, nil, userdata)
        if rc >= 0 {
            var call: OpaquePointer?
            rc = sd_bus_message_new_method_call(bus, &call, "org.freedesktop.DBus", "/org/freedesktop/DBus",
                                                "org.freedesktop.DBus", "GetNameOwner")
            if rc >= 0, let call { rc = BusMessage.append(call, string: name) }
            if rc >= 0, let call {
                rc = sd_bus_call_async(bus, &entry.query, call, { reply, userdata, _ in
                    let entry = Unmanaged<Entry>.fromOpaque(userdata!).takeUnretainedValue()
                    if let slot = entry.query { sd_bus_slot_unref(slot) }
                    entry.query = nil
                    if let reply, sd_bus_message_is_method_error(reply, "org.freedesktop.DBus.Error.NameHasNoOwner") > 0 {
                        entry.watch?.gone(entry.name)
                    }
                    return 0
                }, userdata, 0)
            }
            if let call { sd_bus_message_unref(call) }
        }
        guard rc >= 0 else {
            entry.cancel()
            return false
        }
        entries[name] = entry
        return true
    }

    /// Stops watching `name` (its claims were released).
    func unwatch(_ name: String) {
        entries.removeValue(forKey: name)?.cancel()
    }

    /// Stops watching every name.
    func close() {
        for entry in entries.values { entry.cancel() }
        entries = [:]
    }

    private func gone(_ name: String) {
        // Once: the signal and an error reply may both come.
        guard entries[name] != nil else { return }
        unwatch(name)
        vanished(name)
    }
}
