// Forwarding shim for libevdev (with its uinput API) and <linux/input.h>. No logic lives here.
//
// Swift imports libevdev's functions, `struct input_event`, `struct ff_effect`, uinput's
// `struct uinput_ff_upload`/`uinput_ff_erase` and the plain integer macros (EV_KEY, KEY_A,
// EV_UINPUT, UI_FF_UPLOAD, ...) on its own; every ioctl goes through libevdev but EVIOCGKEY,
// the keys down in the kernel now (libevdev's key state is what it has read so far), and the
// force-feedback ones a twin forwards (EVIOCSFF, EVIOCRMFF on the physical device;
// UI_BEGIN/END_FF_UPLOAD/ERASE on the twin's /dev/uinput fd): their request numbers are
// function-like macros Swift cannot import, so the functions below return them. No struct is mirrored byte for byte in Swift (clang's importer lays them out for
// the target), so no layout is asserted here and 32-bit targets build as well.
#ifndef CEVDEV_H
#define CEVDEV_H

#include <linux/input.h>
#include <libevdev/libevdev.h>
// The uinput half of libevdev (the same library, libevdev.so): evflowd's virtual twins.
#include <libevdev/libevdev-uinput.h>
// uinput's force-feedback requests (struct uinput_ff_upload, EV_UINPUT, UI_FF_UPLOAD, ...).
#include <linux/uinput.h>

// EVIOCGKEY(len): the ioctl request that reads the kernel's key bitmap (len bytes).
static inline unsigned long cevdev_eviocgkey(unsigned int len) { return EVIOCGKEY(len); }

// The force-feedback ioctls' request numbers (docs/virtual-device.md, "Force feedback").
static inline unsigned long cevdev_eviocsff(void) { return EVIOCSFF; }
static inline unsigned long cevdev_eviocrmff(void) { return EVIOCRMFF; }
static inline unsigned long cevdev_ui_begin_ff_upload(void) { return UI_BEGIN_FF_UPLOAD; }
static inline unsigned long cevdev_ui_end_ff_upload(void) { return UI_END_FF_UPLOAD; }
static inline unsigned long cevdev_ui_begin_ff_erase(void) { return UI_BEGIN_FF_ERASE; }
static inline unsigned long cevdev_ui_end_ff_erase(void) { return UI_END_FF_ERASE; }

#endif
