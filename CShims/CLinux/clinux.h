// Forwarding shim for epoll, timerfd and eventfd. No logic lives here.
#ifndef CLINUX_H
#define CLINUX_H

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>

#endif
