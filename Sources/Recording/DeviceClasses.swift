import InputModel

/// The one place recordings get udev classes (`ID_INPUT_*`) from recorded capabilities.
///
/// `DeviceClassifier` (InputModel) is being written by another engineer and is not in the tree
/// yet, so until it lands this returns no classes; replace the body with
/// `DeviceClassifier.classes(capabilities:inputProperties:)` then. Recordings that carry udev
/// properties (libinput record) take their classes from those instead.
func recordedDeviceClasses(capabilities: [UInt16: Set<UInt16>],
                           inputProperties: Set<UInt16>) -> Set<DeviceClass> {
    []
}
