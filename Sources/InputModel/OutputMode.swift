/// Where evflowd sends a device's filtered stream besides its socket (configuration key
/// `output`, docs/configuration.md).
public enum OutputMode: String, Hashable, Sendable, Codable, CaseIterable {
    /// Read the device beside every other reader; only socket clients see the filtered stream.
    /// The default.
    case observe
    /// Grab the device and re-emit the filtered stream through a uinput virtual twin, so
    /// every application reads the clean stream.
    case virtual
}
