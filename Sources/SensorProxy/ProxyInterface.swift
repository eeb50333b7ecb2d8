/// The names of iio-sensor-proxy's D-Bus API, and its introspection data as evflowd serves it.
public enum ProxyInterface {
    /// The well-known bus name.
    public static let busName = "net.hadess.SensorProxy"
    /// The object.
    public static let path = "/net/hadess/SensorProxy"
    /// The main interface (the compass's, `net.hadess.SensorProxy.Compass`, is not served).
    public static let name = "net.hadess.SensorProxy"
    /// The standard properties interface (Get, GetAll, Set, PropertiesChanged).
    public static let properties = "org.freedesktop.DBus.Properties"
    /// The standard introspection interface.
    public static let introspectable = "org.freedesktop.DBus.Introspectable"

    /// `Introspect`'s answer for the object: the interface's methods and read-only
    /// properties, with the standard interfaces the object answers.
    public static var introspection: String {
        var methods = ""
        for kind in ProxySensorKind.allCases {
            methods += "    <method name=\"Claim\(kind.rawValue)\"/>\n    <method name=\"Release\(kind.rawValue)\"/>\n"
        }
        let properties = ProxyProperties().all.map {
            "    <property name=\"\($0.name)\" type=\"\($0.value.signature)\" access=\"read\"/>\n"
        }.joined()
        return """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            <node>
              <interface name="\(name)">
            \(methods)\(properties)  </interface>
              <interface name="\(Self.properties)">
                <method name="Get"><arg name="interface" direction="in" type="s"/><arg name="name" direction="in" type="s"/><arg name="value" direction="out" type="v"/></method>
                <method name="GetAll"><arg name="interface" direction="in" type="s"/><arg name="properties" direction="out" type="a{sv}"/></method>
                <method name="Set"><arg name="interface" direction="in" type="s"/><arg name="name" direction="in" type="s"/><arg name="value" direction="in" type="v"/></method>
                <signal name="PropertiesChanged"><arg name="interface" type="s"/><arg name="changed" type="a{sv}"/><arg name="invalidated" type="as"/></signal>
              </interface>
              <interface name="\(introspectable)">
                <method name="Introspect"><arg name="xml" direction="out" type="s"/></method>
              </interface>
              <interface name="org.freedesktop.DBus.Peer">
                <method name="Ping"/>
                <method name="GetMachineId"><arg name="machine_uuid" direction="out" type="s"/></method>
              </interface>
            </node>

            """
    }
}
