// evflow-sensors-probe: see SensorsProbe.swift.
SensorsProbe.main()
