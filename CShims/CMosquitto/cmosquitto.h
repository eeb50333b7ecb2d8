// Forwarding shim for libmosquitto (Debian libmosquitto-dev), for the MQTTBridge module.
// No logic lives here: mosquitto.h's functions, constants and callback types import directly.
#ifndef CMOSQUITTO_H
#define CMOSQUITTO_H

#include <mosquitto.h>

#endif
