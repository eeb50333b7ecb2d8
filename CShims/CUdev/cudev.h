// Forwarding shim for libudev. No logic lives here.
//
// Everything Swift needs imports directly. The one macro it cannot import,
// udev_list_entry_foreach (a for-loop), is replaced in Swift by walking
// udev_list_entry_get_first / udev_list_entry_get_next, so nothing is forwarded.
#ifndef CUDEV_H
#define CUDEV_H

#include <libudev.h>

#endif
