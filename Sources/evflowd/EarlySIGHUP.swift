#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// SIGHUP before the reload service traps it. Its default action ends the process (exit
/// 129), so `install()` runs first thing in `main`: from then on a SIGHUP only sets a flag,
/// which the reload service takes once it is up, and reloads once (the configuration read at
/// start may be older than the file the SIGHUP was about).
enum EarlySIGHUP {
    private static let seen = Atomic<Bool>(false)

    /// Installs the flag-setting handler (an atomic store: async-signal-safe).
    static func install() {
        // The flag's lazy initialisation (swift_once) must not be the handler's first access:
        // it is not async-signal-safe.
        _ = seen.load(ordering: .relaxed)
        var action = sigaction()
        action.__sigaction_handler.sa_handler = { _ in EarlySIGHUP.seen.store(true, ordering: .relaxed) }
        sigemptyset(&action.sa_mask)
        action.sa_flags = SA_RESTART
        sigaction(SIGHUP, &action, nil)
    }

    /// Whether a SIGHUP came since `install()`; clears the flag.
    static func take() -> Bool { seen.exchange(false, ordering: .relaxed) }
}
