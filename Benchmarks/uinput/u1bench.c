// u1bench - the U1 benchmark's two programs written for it (docs/benchmarks.md, "U1: added
// latency of the virtual device"), one binary:
//
//   u1bench floor SOURCE_NODE
//       The floor: the least a grab-and-re-emit program can do. Clones SOURCE_NODE's event
//       types and codes into a uinput device named "<name> (floor)", grabs SOURCE_NODE
//       (EVIOCGRAB) and copies every event it reads to the uinput device, unchanged, on one
//       thread: read() -> one write() per frame (events up to SYN_REPORT), no filtering.
//
//   u1bench floor --event-loop SOURCE_NODE
//       The same floor in an event loop's shape, as evflowd reads: the source opened
//       O_NONBLOCK and watched by epoll (level-triggered); each wake-up reads until read()
//       says EAGAIN, writing each frame as it is whole. The system calls a frame costs are
//       evflowd's (epoll_wait, read, write, the read that answers EAGAIN) with none of its
//       work in user space: the gap between this and `floor` is what the event loop's shape
//       costs, the gap between evflowd and this is what evflowd's own code costs.
//
//   u1bench drive --name NAME --twin NAME --rate HZ --count N [--label TEXT] [--raw FILE]
//       The source and the measurement. Creates a uinput mouse NAME (the "physical" device),
//       waits until a device named --twin other than itself appears (the forwarder's twin),
//       reads that twin on a second thread with EVIOCSCLOCKID(CLOCK_MONOTONIC), sends warm-up
//       frames until one comes through, then N frames of one REL_X event each at HZ
//       (absolute-deadline clock_nanosleep, the period stretched by 1/N so the frames' phase
//       sweeps once through a period over the run; the sending thread SCHED_IDLE, so the
//       forwarder it wakes runs at once), frame i carrying REL_X = i + 1 so the twin's
//       frames are matched by value, not by position (a frame the kernel drops when a reader
//       falls behind is counted lost, not mismatched). Latency of frame i = the twin's kernel
//       timestamp of frame i - CLOCK_MONOTONIC read just before frame i was written to the source. (The
//       source's own kernel timestamp cannot be read: while it is grabbed only the grabber
//       sees it. The write's own system call is therefore inside every figure, the same for
//       every forwarder.) Prints one JSON line: label, rate, sent, received, in_order,
//       syn_dropped (SYN_DROPPED seen on the twin), achieved_hz, p50_us, p99_us, max_us (of
//       the frames received); with --raw, FILE gets one line per frame (index, sent, the
//       twin's timestamp, latency, in ns). Exit status 1 when a frame was lost or came out of order.
//       Around the measured frames it prints `ready` and `done` (one line each) and waits for
//       a line on stdin after each, so the caller can sample the forwarder's CPU time over
//       exactly the measurement (stdin at EOF: no wait).
//
// Built by scripts/bench-uinput with the toolchain's clang, static, so the guest runs it as is.
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define BITS_PER_LONG (sizeof(long) * 8)
#define NLONGS(n) (((n) + BITS_PER_LONG - 1) / BITS_PER_LONG)
#define TEST_BIT(bit, array) (((array)[(bit) / BITS_PER_LONG] >> ((bit) % BITS_PER_LONG)) & 1)

static void die(const char *what) {
    fprintf(stderr, "u1bench: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void xioctl(int fd, unsigned long request, long arg, const char *what) {
    if (ioctl(fd, request, arg) < 0) die(what);
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int write_all(int fd, const void *buf, size_t len) {
    const char *p = buf;
    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

// ------------------------------------------------------------------ floor
static int floor_main(const char *source, int event_loop) {
    int in = open(source, O_RDONLY | O_CLOEXEC | (event_loop ? O_NONBLOCK : 0));
    if (in < 0) die(source);
    char name[UINPUT_MAX_NAME_SIZE] = {0};
    if (ioctl(in, EVIOCGNAME(sizeof name - 1), name) < 0) die("EVIOCGNAME");
    struct input_id id;
    xioctl(in, EVIOCGID, (long)&id, "EVIOCGID");

    int out = open("/dev/uinput", O_WRONLY | O_CLOEXEC);
    if (out < 0) die("/dev/uinput");
    unsigned long types[NLONGS(EV_CNT)] = {0};
    xioctl(in, EVIOCGBIT(0, sizeof types), (long)types, "EVIOCGBIT");
    // The types the benchmark's source has, cloned code by code.
    static const struct { int type, max; unsigned long req; } kinds[] = {
        {EV_KEY, KEY_MAX, UI_SET_KEYBIT}, {EV_REL, REL_MAX, UI_SET_RELBIT},
        {EV_MSC, MSC_MAX, UI_SET_MSCBIT}, {EV_LED, LED_MAX, UI_SET_LEDBIT},
    };
    xioctl(out, UI_SET_EVBIT, EV_SYN, "UI_SET_EVBIT");
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        if (!TEST_BIT(kinds[k].type, types)) continue;
        unsigned long codes[NLONGS(KEY_CNT)] = {0};
        xioctl(in, EVIOCGBIT(kinds[k].type, sizeof codes), (long)codes, "EVIOCGBIT");
        xioctl(out, UI_SET_EVBIT, kinds[k].type, "UI_SET_EVBIT");
        for (int c = 0; c <= kinds[k].max; c++)
            if (TEST_BIT(c, codes)) xioctl(out, kinds[k].req, c, "UI_SET_*BIT");
    }
    struct uinput_setup setup = {.id = id};
    snprintf(setup.name, sizeof setup.name, "%.60s (floor)", name);
    xioctl(out, UI_DEV_SETUP, (long)&setup, "UI_DEV_SETUP");
    xioctl(out, UI_DEV_CREATE, 0, "UI_DEV_CREATE");
    xioctl(in, EVIOCGRAB, 1, "EVIOCGRAB");

    // Frame by frame: each frame (its events up to and including SYN_REPORT) is written to
    // the twin in its own write(2) as soon as it is whole, as evflowd does. Copying a whole
    // read buffer at once (up to 64 events) put a burst of frames into the twin's readers'
    // buffers in one system call, faster than a reader on the one vCPU could drain them: the
    // earlier floor lost 38 % of the frames at 8 kHz to SYN_DROPPED.
    int ep = -1;
    if (event_loop) {
        ep = epoll_create1(EPOLL_CLOEXEC);
        if (ep < 0) die("epoll_create1");
        struct epoll_event watch = {.events = EPOLLIN};
        if (epoll_ctl(ep, EPOLL_CTL_ADD, in, &watch) < 0) die("epoll_ctl");
    }
    struct input_event buf[64];
    size_t have = 0;                             // events in buf, the last frame not yet whole
    for (;;) {
        ssize_t n = read(in, buf + have, sizeof buf - have * sizeof buf[0]);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && errno == EAGAIN) {          // --event-loop: drained; wait for readiness
            struct epoll_event ready;
            if (epoll_wait(ep, &ready, 1, -1) < 0 && errno != EINTR) die("epoll_wait");
            continue;
        }
        if (n <= 0) break;                       // ENODEV: the source is gone
        have += (size_t)n / sizeof buf[0];
        size_t start = 0;
        for (size_t i = 0; i < have; i++) {
            if (buf[i].type != EV_SYN || buf[i].code != SYN_REPORT) continue;
            if (write_all(out, buf + start, (i + 1 - start) * sizeof buf[0]) < 0) die("write uinput");
            start = i + 1;
        }
        // A frame longer than the buffer is passed on as it is (no source of U1 sends one).
        if (start == 0 && have == sizeof buf / sizeof buf[0]) {
            if (write_all(out, buf, sizeof buf) < 0) die("write uinput");
            start = have;
        }
        memmove(buf, buf + start, (have - start) * sizeof buf[0]);
        have -= start;
    }
    ioctl(out, UI_DEV_DESTROY);
    return 0;
}

// ------------------------------------------------------------------ drive
struct reader {
    int fd;
    int count;                 // frames expected in the measurement
    int64_t *stamps;           // twin timestamp of frame i (REL_X = i + 1), 0 until it comes
    atomic_int measured;       // REL_X frames seen
    atomic_int last;           // the highest REL_X value seen so far
    atomic_int disorder;       // REL_X values that came after a higher one
    atomic_int warmups;        // REL_Y frames seen (warm-up)
    atomic_int dropped;        // SYN_DROPPED seen
};

static void *reader_main(void *arg) {
    struct reader *r = arg;
    struct input_event ev[64];
    for (;;) {
        ssize_t n = read(r->fd, ev, sizeof ev);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return NULL;
        for (size_t i = 0; i < (size_t)n / sizeof ev[0]; i++) {
            if (ev[i].type == EV_SYN && ev[i].code == SYN_DROPPED) atomic_fetch_add(&r->dropped, 1);
            if (ev[i].type != EV_REL) continue;
            if (ev[i].code == REL_Y) { atomic_fetch_add(&r->warmups, 1); continue; }
            if (ev[i].code != REL_X) continue;
            int v = ev[i].value;
            if (v >= 1 && v <= r->count)
                r->stamps[v - 1] = (int64_t)ev[i].input_event_sec * 1000000000 + (int64_t)ev[i].input_event_usec * 1000;
            if (v <= atomic_load(&r->last)) atomic_fetch_add(&r->disorder, 1);
            atomic_store(&r->last, v);
            atomic_fetch_add(&r->measured, 1);
        }
    }
}

// The event node of a device named NAME other than EXCEPT (e.g. "event5"), or 0.
static int find_node(const char *name, const char *except, char *node, size_t len) {
    DIR *d = opendir("/sys/class/input");
    if (!d) die("/sys/class/input");
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d))) {
        if (strncmp(e->d_name, "event", 5) != 0 || strcmp(e->d_name, except) == 0) continue;
        char path[512], got[256] = {0};
        snprintf(path, sizeof path, "/sys/class/input/%s/device/name", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(got, sizeof got, f)) got[strcspn(got, "\n")] = 0;
        fclose(f);
        if (strcmp(got, name) == 0) { snprintf(node, len, "%s", e->d_name); found = 1; }
    }
    closedir(d);
    return found;
}

static void emit(int fd, int code, int value) {
    struct input_event ev[2] = {
        {.type = EV_REL, .code = (unsigned short)code, .value = value},
        {.type = EV_SYN, .code = SYN_REPORT, .value = 0},
    };
    if (write_all(fd, ev, sizeof ev) < 0) die("write source");
}

// Says WHAT on stdout and waits for a line on stdin (the caller samples CPU time meanwhile).
static void handshake(const char *what) {
    printf("%s\n", what);
    fflush(stdout);
    char line[16];
    if (!fgets(line, sizeof line, stdin)) return;
}

static int cmp64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int drive_main(int argc, char **argv) {
    const char *name = NULL, *twin = NULL, *label = "", *raw = NULL;
    int rate = 1000, count = 2000;
    for (int i = 2; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--name")) name = argv[i + 1];
        else if (!strcmp(argv[i], "--twin")) twin = argv[i + 1];
        else if (!strcmp(argv[i], "--rate")) rate = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--count")) count = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--label")) label = argv[i + 1];
        else if (!strcmp(argv[i], "--raw")) raw = argv[i + 1];
        else { fprintf(stderr, "u1bench: unknown option %s\n", argv[i]); return 2; }
    }
    if (!name || !twin || rate <= 0 || count <= 0) {
        fprintf(stderr, "usage: u1bench drive --name NAME --twin NAME --rate HZ --count N [--label TEXT] [--raw FILE]\n");
        return 2;
    }

    int src = open("/dev/uinput", O_WRONLY | O_CLOEXEC);
    if (src < 0) die("/dev/uinput");
    xioctl(src, UI_SET_EVBIT, EV_KEY, "UI_SET_EVBIT");
    xioctl(src, UI_SET_KEYBIT, BTN_LEFT, "UI_SET_KEYBIT");
    xioctl(src, UI_SET_KEYBIT, BTN_RIGHT, "UI_SET_KEYBIT");
    xioctl(src, UI_SET_EVBIT, EV_REL, "UI_SET_EVBIT");
    xioctl(src, UI_SET_RELBIT, REL_X, "UI_SET_RELBIT");
    xioctl(src, UI_SET_RELBIT, REL_Y, "UI_SET_RELBIT");
    struct uinput_setup setup = {.id = {.bustype = BUS_USB, .vendor = 0x1d6b, .product = 0x0111, .version = 1}};
    snprintf(setup.name, sizeof setup.name, "%s", name);
    xioctl(src, UI_DEV_SETUP, (long)&setup, "UI_DEV_SETUP");
    xioctl(src, UI_DEV_CREATE, 0, "UI_DEV_CREATE");
    char sysname[64] = {0}, own[64] = {0}, node[64] = {0};
    xioctl(src, UI_GET_SYSNAME(sizeof sysname), (long)sysname, "UI_GET_SYSNAME");
    // The source's own eventN, so a twin with the same name (interception-tools' uinput) is
    // told apart from it.
    for (int tries = 0; tries < 5000 && !own[0]; tries++) {
        char path[256];
        snprintf(path, sizeof path, "/sys/devices/virtual/input/%s", sysname);
        DIR *d = opendir(path);
        struct dirent *e;
        while (d && (e = readdir(d)))
            if (!strncmp(e->d_name, "event", 5)) snprintf(own, sizeof own, "%s", e->d_name);
        if (d) closedir(d);
        if (!own[0]) usleep(1000);
    }
    if (!own[0]) { fprintf(stderr, "u1bench: no event node for %s\n", sysname); return 1; }
    printf("source /dev/input/%s\n", own);
    fflush(stdout);

    int64_t deadline = now_ns() + 60LL * 1000000000;
    while (!find_node(twin, own, node, sizeof node)) {
        if (now_ns() > deadline) { fprintf(stderr, "u1bench: no device named '%s' after 60 s\n", twin); return 1; }
        usleep(2000);
    }
    char path[128];
    snprintf(path, sizeof path, "/dev/input/%s", node);
    struct reader r = {.count = count};
    r.stamps = calloc((size_t)count, sizeof *r.stamps);
    int64_t *sent = calloc((size_t)count, sizeof *sent);
    if (!r.stamps || !sent) die("calloc");
    for (int tries = 0; (r.fd = open(path, O_RDONLY | O_CLOEXEC)) < 0; tries++) {
        if (tries > 5000) die(path);           // (udev may still be setting its mode)
        usleep(1000);
    }
    int clock = CLOCK_MONOTONIC;
    xioctl(r.fd, EVIOCSCLOCKID, (long)&clock, "EVIOCSCLOCKID");
    pthread_t thread;
    if (pthread_create(&thread, NULL, reader_main, &r) != 0) die("pthread_create");

    // Warm-up: until the path carries frames (the forwarder may grab only after creating its
    // twin), then 50 more so start-up costs are paid.
    deadline = now_ns() + 60LL * 1000000000;
    while (atomic_load(&r.warmups) == 0) {
        if (now_ns() > deadline) { fprintf(stderr, "u1bench: nothing came through %s in 60 s\n", path); return 1; }
        emit(src, REL_Y, 1);
        usleep(10000);
    }
    for (int i = 0; i < 50; i++) { emit(src, REL_Y, 1); usleep(2000); }
    usleep(100000);
    handshake("ready");

    // The writer yields to every other task from here on (SCHED_IDLE: the kernel's wake-up
    // preemption always lets a normal task that wakes run at once). On one vCPU the forwarder,
    // woken by the source's event inside our write(), otherwise runs either at once or only
    // after this thread went back to sleep, as CFS's running tally (vruntime) of the two
    // decides: a choice that flipped in the middle of a run, after a few hundred frames in one
    // run and never in another, and moved the floor's p50 by 3 µs (16.2 → 13.3 µs) between
    // runs. Preempted at once is also what a machine with a free CPU does.
    struct sched_param idle = {0};
    if (sched_setscheduler(0, SCHED_IDLE, &idle) < 0) die("sched_setscheduler(SCHED_IDLE)");
    // Frame i at start + i * (period + period / count): the frames' phase against anything
    // periodic in the guest (the 250-Hz timer tick, whose period the frames' divides) sweeps
    // once through a whole period over the run instead of staying where the run happened to
    // start. With a fixed phase, whether the tick landed inside a frame's way set the 8-kHz p99
    // of the run (20.6, 21.4 or 23.5 µs for the same floor in one guest).
    int64_t period = 1000000000LL / rate, start = now_ns() + 1000000;
    for (int i = 0; i < count; i++) {
        int64_t t = start + (int64_t)i * period + (int64_t)i * period / count;
        struct timespec ts = {.tv_sec = t / 1000000000, .tv_nsec = t % 1000000000};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {}
        sent[i] = now_ns();
        emit(src, REL_X, i + 1);
    }
    int64_t took = sent[count - 1] - sent[0];
    // Until the last frame came, or nothing more for a second (the rest was dropped).
    int seen = -1;
    for (int64_t quiet = now_ns(); atomic_load(&r.last) < count && now_ns() - quiet < 1000000000LL; usleep(1000))
        if (atomic_load(&r.measured) != seen) { seen = atomic_load(&r.measured); quiet = now_ns(); }

    handshake("done");
    int received = 0, in_order = atomic_load(&r.disorder) == 0;
    int64_t *lat = calloc((size_t)count, sizeof *lat);
    if (!lat) die("calloc");
    for (int i = 0; i < count; i++)
        if (r.stamps[i] != 0) lat[received++] = r.stamps[i] - sent[i];
    if (raw) {
        // Frame by frame, in the order sent: index, sent (CLOCK_MONOTONIC ns), the twin's
        // timestamp (ns, 0 if lost), latency (ns) - to compare two runs frame against frame.
        FILE *f = fopen(raw, "w");
        if (!f) die(raw);
        for (int i = 0; i < count; i++)
            fprintf(f, "%d %lld %lld %lld\n", i, (long long)sent[i], (long long)r.stamps[i],
                    r.stamps[i] ? (long long)(r.stamps[i] - sent[i]) : 0LL);
        fclose(f);
    }
    qsort(lat, (size_t)received, sizeof *lat, cmp64);
#define PCT(p) (received ? lat[(size_t)((received - 1) * (p))] / 1000.0 : 0.0)
    printf("{\"label\": \"%s\", \"rate\": %d, \"sent\": %d, \"received\": %d, \"in_order\": %s, "
           "\"syn_dropped\": %d, \"achieved_hz\": %.0f, \"p50_us\": %.1f, \"p99_us\": %.1f, \"max_us\": %.1f}\n",
           label, rate, count, received, in_order ? "true" : "false", atomic_load(&r.dropped),
           took > 0 ? (count - 1) * 1e9 / (double)took : 0.0, PCT(0.5), PCT(0.99), PCT(1.0));
    fflush(stdout);
    // Destroying the source ends the forwarder's read (ENODEV) and with it the twin.
    ioctl(src, UI_DEV_DESTROY);
    close(src);
    return received == count && in_order ? 0 : 1;
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "floor")) return floor_main(argv[2], 0);
    if (argc == 4 && !strcmp(argv[1], "floor") && !strcmp(argv[2], "--event-loop")) return floor_main(argv[3], 1);
    if (argc >= 2 && !strcmp(argv[1], "drive")) return drive_main(argc, argv);
    fprintf(stderr, "usage: u1bench floor [--event-loop] SOURCE_NODE\n"
                    "       u1bench drive --name NAME --twin NAME --rate HZ --count N [--label TEXT] [--raw FILE]\n");
    return 2;
}
