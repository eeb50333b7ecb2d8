// Forwarding shim for libevdev (with its uinput API) and <linux/input.h>. No logic lives here.
//
// Swift imports libevdev's functions, `struct input_event` and the plain integer macros
// (EV_KEY, KEY_A, ...) on its own; every ioctl goes through libevdev but one: EVIOCGKEY, the
// keys down in the kernel now (libevdev's key state is what it has read so far), whose
// request number is a function-like macro Swift cannot import: cevdev_eviocgkey forwards it. No struct is mirrored byte for byte in Swift (clang's importer lays them out for
// the target), so no layout is asserted here and 32-bit targets build as well.
#ifndef CEVDEV_H
#define CEVDEV_H

#include <linux/input.h>
#include <libevdev/libevdev.h>
// The uinput half of libevdev (the same library, libevdev.so): evflowd's virtual twins.
#include <libevdev/libevdev-uinput.h>

// EVIOCGKEY(len): the ioctl request that reads the kernel's key bitmap (len bytes).
static inline unsigned long cevdev_eviocgkey(unsigned int len) { return EVIOCGKEY(len); }

#endif
