// Forwarding shim for libsystemd's sd-daemon.h and sd-bus.h. No logic lives here.
//
// SD_LISTEN_FDS_START and the sd_* functions import directly. The variadic sd_notifyf cannot
// be called from Swift; callers format the state string in Swift and pass it to sd_notify.
// Likewise sd-bus's variadic calls (sd_bus_call_method_async, sd_bus_message_read): evflowd
// builds messages with sd_bus_message_append_basic and reads them with
// sd_bus_message_read_basic (the suspend/resume monitor, SleepMonitor).
#ifndef CSYSTEMD_H
#define CSYSTEMD_H

#include <systemd/sd-daemon.h>
#include <systemd/sd-bus.h>

#endif
