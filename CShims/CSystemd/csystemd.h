// Forwarding shim for libsystemd's sd-daemon.h. No logic lives here.
//
// SD_LISTEN_FDS_START and the sd_* functions import directly. The variadic sd_notifyf cannot
// be called from Swift; callers format the state string in Swift and pass it to sd_notify.
#ifndef CSYSTEMD_H
#define CSYSTEMD_H

#include <systemd/sd-daemon.h>

#endif
