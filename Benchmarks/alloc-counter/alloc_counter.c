// LD_PRELOAD heap-allocation counter for evflow-ratios (run.sh builds it with cc).
//
// Counts every allocation call (malloc, calloc, realloc, posix_memalign, aligned_alloc,
// memalign, valloc) on all threads while counting is on, and forwards to glibc's own entry
// points (__libc_*), so no dlsym bootstrap problem. The runner finds the two functions below
// with dlsym and counts one row run at a time; timing runs happen in a process without it.
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static volatile int counting;
static uint64_t count;

static inline void note(void) {
    if (counting) __atomic_fetch_add(&count, 1, __ATOMIC_RELAXED);
}

// Starts (1) or stops (0) counting; starting resets the count.
void evbench_alloc_counting(int on) {
    if (on) __atomic_store_n(&count, 0, __ATOMIC_RELAXED);
    counting = on;
}

// Allocation calls counted since counting started.
uint64_t evbench_alloc_count(void) { return __atomic_load_n(&count, __ATOMIC_RELAXED); }

void *malloc(size_t size) { note(); return __libc_malloc(size); }
void *calloc(size_t n, size_t size) { note(); return __libc_calloc(n, size); }
void *realloc(void *p, size_t size) { note(); return __libc_realloc(p, size); }
void free(void *p) { __libc_free(p); }
void *memalign(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { note(); return __libc_memalign(alignment, size); }
void *valloc(size_t size) { note(); return __libc_memalign(4096, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
    note();
    void *p = __libc_memalign(alignment, size);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
