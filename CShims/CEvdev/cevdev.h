// Forwarding shim for libevdev and <linux/input.h>/<linux/uinput.h>. No logic lives here.
//
// Swift imports libevdev's functions and the plain integer macros (EV_KEY, KEY_A, ...) on its
// own. It cannot import the kernel's ioctl request macros (_IOR/_IOW with sizeof), so they are
// forwarded below as static inline functions returning the request number as `unsigned long`,
// which is what Glibc's Swift `ioctl(_:_:_:)` overloads take.
#ifndef CEVDEV_H
#define CEVDEV_H

#include <stddef.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <libevdev/libevdev.h>
#include <libevdev/libevdev-uinput.h>

// Structs Swift reads and writes byte for byte (x86_64 / LP64 layouts).
_Static_assert(sizeof(struct input_event) == 24, "struct input_event is 24 bytes on LP64");
_Static_assert(offsetof(struct input_event, type) == 16, "input_event.type follows the timeval");
_Static_assert(sizeof(struct input_id) == 8, "struct input_id is four u16");
_Static_assert(sizeof(struct input_absinfo) == 24, "struct input_absinfo is six s32");
_Static_assert(sizeof(struct uinput_setup) == 92, "struct uinput_setup: input_id + name[80] + u32");
_Static_assert(sizeof(struct uinput_abs_setup) == 28, "struct uinput_abs_setup: u16 + pad + absinfo");

// evdev ioctls (<linux/input.h>).
static inline unsigned long cevdev_eviocgversion(void) { return EVIOCGVERSION; }
static inline unsigned long cevdev_eviocgid(void) { return EVIOCGID; }
static inline unsigned long cevdev_eviocgname(unsigned int len) { return EVIOCGNAME(len); }
static inline unsigned long cevdev_eviocgphys(unsigned int len) { return EVIOCGPHYS(len); }
static inline unsigned long cevdev_eviocguniq(unsigned int len) { return EVIOCGUNIQ(len); }
static inline unsigned long cevdev_eviocgprop(unsigned int len) { return EVIOCGPROP(len); }
static inline unsigned long cevdev_eviocgbit(unsigned int ev, unsigned int len) { return EVIOCGBIT(ev, len); }
static inline unsigned long cevdev_eviocgabs(unsigned int abs) { return EVIOCGABS(abs); }
static inline unsigned long cevdev_eviocgkey(unsigned int len) { return EVIOCGKEY(len); }
static inline unsigned long cevdev_eviocgsw(unsigned int len) { return EVIOCGSW(len); }
static inline unsigned long cevdev_eviocgrab(void) { return EVIOCGRAB; }
static inline unsigned long cevdev_eviocrevoke(void) { return EVIOCREVOKE; }
static inline unsigned long cevdev_eviocsclockid(void) { return EVIOCSCLOCKID; }

// uinput ioctls (<linux/uinput.h>), for tests that create virtual devices without libevdev-uinput.
static inline unsigned long cevdev_ui_dev_create(void) { return UI_DEV_CREATE; }
static inline unsigned long cevdev_ui_dev_destroy(void) { return UI_DEV_DESTROY; }
static inline unsigned long cevdev_ui_dev_setup(void) { return UI_DEV_SETUP; }
static inline unsigned long cevdev_ui_abs_setup(void) { return UI_ABS_SETUP; }
static inline unsigned long cevdev_ui_set_evbit(void) { return UI_SET_EVBIT; }
static inline unsigned long cevdev_ui_set_keybit(void) { return UI_SET_KEYBIT; }
static inline unsigned long cevdev_ui_set_relbit(void) { return UI_SET_RELBIT; }
static inline unsigned long cevdev_ui_set_absbit(void) { return UI_SET_ABSBIT; }
static inline unsigned long cevdev_ui_set_mscbit(void) { return UI_SET_MSCBIT; }
static inline unsigned long cevdev_ui_set_ledbit(void) { return UI_SET_LEDBIT; }
static inline unsigned long cevdev_ui_set_swbit(void) { return UI_SET_SWBIT; }
static inline unsigned long cevdev_ui_set_propbit(void) { return UI_SET_PROPBIT; }
static inline unsigned long cevdev_ui_get_sysname(unsigned int len) { return UI_GET_SYSNAME(len); }

#endif
