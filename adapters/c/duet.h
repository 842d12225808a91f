/*
 * duet.h — take part in a duetbench synchronous duet from a C or C++ harness.
 *
 * One self-contained header (libc only, Linux, GCC or Clang; C11 or C++11 and newer). Copy it into
 * your project and call, around every iteration you time (warmups included):
 *
 *     duet_set_kind('w');          // optional: 'w' warmup, 'm' measurement, 0 unknown (sticky)
 *     duet_before_iteration();     // wait for the other side, then read the clock
 *     ... one iteration ...
 *     duet_after_iteration();      // read the clock, append one line to the iteration log
 *
 * The contract (environment, waiting, log format) is docs/hooks.md of duetbench; the shared page is
 * docs/barrier-protocol.md. Without the DUET_* environment both calls do nothing, so a harness with
 * the hook built in runs normally outside `duet run`. Call them from one thread.
 *
 * The same header is the one implementation of the barrier protocol: duetbench's launcher includes
 * it with DUET_PROTOCOL_ONLY defined (the page and the wait, no hook state), and libduethook.so, the
 * Python hook's native half, is this header compiled as a shared library.
 *
 * With a strict standard mode (-std=c11, not gnu11) include duet.h before any system header, or
 * define _GNU_SOURCE / _POSIX_C_SOURCE yourself: the clock and mmap are POSIX, not ISO C.
 */
#ifndef DUET_H
#define DUET_H

#if defined(__STRICT_ANSI__) && !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE) && \
    !defined(_XOPEN_SOURCE) && !defined(_DEFAULT_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdint.h>
#include <time.h>

#ifndef CLOCK_MONOTONIC
#error "duet.h needs POSIX clocks: include duet.h before other headers, or compile with -D_GNU_SOURCE"
#endif

/* ------------------------------------------------------------------------------------------------
 * The barrier protocol, version 1
 *
 * A barrier is a file (normally under /dev/shm) of DUET_SHM_SIZE bytes, mapped MAP_SHARED by every
 * party. Layout (little-endian, offsets in bytes):
 *
 *   0   u32 magic       DUET_MAGIC ("DUET")
 *   4   u32 version     DUET_PROTOCOL_VERSION
 *   8   u32 parties     number of processes that must arrive before release (2 for a duet)
 *   12  u32 abort       0 = fine; otherwise a DUET_ABORT_* reason. Once set, every wait returns at once.
 *   64  u32 arrived     parties arrived in the current generation (own cache line)
 *   128 u64 generation  incremented by the last arrival; waiters spin until it changes (own cache line)
 *
 * Waiters spin (with a pause instruction), not futex-wait: on 2-vCPU VMs a futex wake-up costs
 * ~15 us plus millisecond tails, a spin release ~0.1 us. A wait gives up after a timeout and sets
 * abort, so one side failing never hangs the other.
 *
 * The fields are plain integers accessed only through the __atomic builtins, which C and C++ share
 * (C11 _Atomic is not C++, std::atomic is not C); all are lock-free for 32- and 64-bit integers, so
 * nothing needs libatomic.
 * ---------------------------------------------------------------------------------------------- */

#define DUET_MAGIC 0x54455544u /* "DUET" */
#define DUET_PROTOCOL_VERSION 1u
#define DUET_SHM_SIZE 4096

enum duet_abort_reason {
    DUET_ABORT_NONE = 0,
    DUET_ABORT_TIMEOUT = 1, /* a party waited longer than its timeout */
    DUET_ABORT_FAILED = 2,  /* a party failed before arriving (set by a launcher, a hook or the orchestrator) */
    DUET_ABORT_USER = 3,    /* the orchestrator was interrupted */
    DUET_ABORT_EXITED = 4   /* a side's command exited (set by its launcher): no more partner to wait for */
};

enum duet_wait_result {
    DUET_RELEASED = 0,
    DUET_TIMED_OUT = 1,
    DUET_ABORTED = 2,
    DUET_BAD_PAGE = 3
};

struct duet_shm {
    uint32_t magic;
    uint32_t version;
    uint32_t parties;
    uint32_t abort;
    char pad0[64 - 16];
    uint32_t arrived;
    char pad1[64 - 4];
    uint64_t generation;
    char pad2[DUET_SHM_SIZE - 136];
};

#ifdef __cplusplus
static_assert(sizeof(struct duet_shm) == DUET_SHM_SIZE, "duet_shm must be one page");
#else
_Static_assert(sizeof(struct duet_shm) == DUET_SHM_SIZE, "duet_shm must be one page");
#endif

#define DUET_LOAD(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)

static inline void duet_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static inline int64_t duet_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline int duet_page_valid(struct duet_shm *s)
{
    return DUET_LOAD(&s->magic) == DUET_MAGIC && DUET_LOAD(&s->version) == DUET_PROTOCOL_VERSION &&
           DUET_LOAD(&s->parties) >= 1;
}

/* Milliseconds as nanoseconds, saturating: a timeout of billions of seconds means "for ever", not an
 * overflow into a negative or tiny one. */
static inline int64_t duet_ms_to_ns(long long ms)
{
    return ms > INT64_MAX / 1000000LL ? INT64_MAX : ms < INT64_MIN / 1000000LL ? INT64_MIN : (int64_t)ms * 1000000LL;
}

/* Set the abort reason unless one is set already: the first reason is the root cause. */
static inline void duet_set_abort(struct duet_shm *s, uint32_t reason)
{
    uint32_t expected = DUET_ABORT_NONE;
    __atomic_compare_exchange_n(&s->abort, &expected, reason, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

/* Wait until all parties have arrived. timeout_ns <= 0 means wait forever (not recommended). */
static inline int duet_barrier_wait(struct duet_shm *s, int64_t timeout_ns)
{
    if (!duet_page_valid(s))
        return DUET_BAD_PAGE;
    if (DUET_LOAD(&s->abort))
        return DUET_ABORTED;
    /* Read the clock before arriving, also when we turn out to be last: the first clock_gettime of a
     * fresh process faults in the vDSO data page, which would otherwise delay the releasing side's
     * timestamp by microseconds. */
    int64_t arrived_at = duet_now_ns();
    uint64_t gen = DUET_LOAD(&s->generation);
    uint32_t n = __atomic_add_fetch(&s->arrived, 1, __ATOMIC_SEQ_CST);
    if (n >= DUET_LOAD(&s->parties)) {
        __atomic_store_n(&s->arrived, 0, __ATOMIC_SEQ_CST);
        __atomic_add_fetch(&s->generation, 1, __ATOMIC_SEQ_CST);
        return DUET_RELEASED;
    }
    unsigned spins = 0;
    while (__atomic_load_n(&s->generation, __ATOMIC_ACQUIRE) == gen) {
        duet_cpu_relax();
        if ((++spins & 1023u) == 0) {
            int aborted = DUET_LOAD(&s->abort) != 0;
            /* Elapsed time, not a deadline: arrived_at + a timeout meaning "for ever" would overflow. */
            if (!aborted && (timeout_ns <= 0 || duet_now_ns() - arrived_at <= timeout_ns))
                continue;
            /* The release may have come between our last look at the generation and now, with the
             * abort after it (a partner whose whole command ran while we were descheduled): a
             * release that happened wins. */
            if (DUET_LOAD(&s->generation) != gen)
                return DUET_RELEASED;
            if (aborted)
                return DUET_ABORTED;
            duet_set_abort(s, DUET_ABORT_TIMEOUT);
            return DUET_TIMED_OUT;
        }
    }
    return DUET_RELEASED;
}

#ifndef DUET_PROTOCOL_ONLY
/* ------------------------------------------------------------------------------------------------
 * The hook (docs/hooks.md)
 *
 * State is per process, not per translation unit: in C the functions are weak definitions, in C++
 * inline ones, so however many files include this header the linker keeps one copy of each and
 * with it one counter, one log descriptor and one mapping.
 * ---------------------------------------------------------------------------------------------- */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef DUET_API
#ifdef __cplusplus
#define DUET_API inline
#else
#define DUET_API __attribute__((weak))
#endif
#endif

#define DUET_DEFAULT_TIMEOUT_MS 600000LL

/* What duet_hook_state() reports. */
enum duet_hook_states {
    DUET_HOOK_NOT_STARTED = -1, /* no iteration yet: the environment has not been read */
    DUET_HOOK_OFF = 0,          /* no DUET_* environment: every call does nothing */
    DUET_HOOK_LOG_ONLY = 1,     /* no DUET_BARRIER (sequential, aduet): iterations are logged only */
    DUET_HOOK_SYNCING = 2,      /* every iteration so far started through the barrier */
    DUET_HOOK_SYNC_LOST = 3     /* a wait was aborted or timed out: logging goes on unsynchronized */
};

struct duet_hook {
    int started;
    int state;
    char side;
    int kind; /* set by duet_set_kind, copied into each iteration at its start */
    int log_fd;
    int log_failed;
    char *log_path; /* absolute, to reopen the log after the harness closed its descriptor */
    struct duet_shm *page;
    int64_t timeout_ns;
    long index;
    long synced;
    int pending;
    int pending_kind;
    int64_t pending_start;
};

#ifdef __cplusplus
extern "C" {
#endif
DUET_API struct duet_hook *duet_hook_instance(void);
DUET_API void duet_set_kind(int kind);
DUET_API int duet_before_iteration(void);
DUET_API int duet_after_iteration(void);
DUET_API int duet_hook_state(void);
DUET_API long duet_hook_synced(void);
DUET_API long duet_hook_iterations(void);
#ifdef __cplusplus
}
#endif

/* The one state of this process (a static local of a single, merged function). */
DUET_API struct duet_hook *duet_hook_instance(void)
{
    static struct duet_hook h;
    return &h;
}

static inline const char *duet_abort_text(uint32_t code)
{
    switch (code) {
    case DUET_ABORT_TIMEOUT: return "the other side timed out waiting";
    case DUET_ABORT_FAILED: return "the other side failed";
    case DUET_ABORT_USER: return "the duet was interrupted";
    case DUET_ABORT_EXITED: return "the other side's command exited";
    default: return "unknown abort reason";
    }
}

static inline struct duet_shm *duet_map_page(const char *path)
{
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "duet: cannot open the barrier DUET_BARRIER=%s: %s; running unsynchronized\n", path,
                strerror(errno));
        return NULL;
    }
    void *p = mmap(NULL, DUET_SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    int saved = errno;
    close(fd);
    if (p == MAP_FAILED) {
        fprintf(stderr, "duet: cannot map the barrier DUET_BARRIER=%s: %s; running unsynchronized\n", path,
                strerror(saved));
        return NULL;
    }
    struct duet_shm *s = (struct duet_shm *)p;
    if (!duet_page_valid(s)) {
        fprintf(stderr, "duet: DUET_BARRIER=%s is not a duet barrier page (protocol v%u); running unsynchronized\n",
                path, DUET_PROTOCOL_VERSION);
        munmap(p, DUET_SHM_SIZE);
        return NULL;
    }
    return s;
}

/* PATH made absolute against the current directory (malloc'd; NULL when out of memory). */
static inline char *duet_absolute_path(const char *path)
{
    char cwd[4096];
    if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
        return strdup(path);
    size_t size = strlen(cwd) + strlen(path) + 2;
    char *full = (char *)malloc(size);
    if (full)
        snprintf(full, size, "%s/%s", cwd, path);
    return full;
}

/* Open the log for appending, on a descriptor far above those a harness uses: a harness that closes
 * every descriptor it did not open (a daemon-style clean-up) and then opens files of its own gets the
 * low numbers again, so the log's lines never land in the harness's files (checking the descriptor's
 * identity before each write, with fstat, costs ~1.4 us per iteration on a VM). */
static inline int duet_open_log(const char *path)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    struct rlimit limit;
    if (fd < 0 || getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur < 64)
        return fd;
    int high = fcntl(fd, F_DUPFD_CLOEXEC, limit.rlim_cur / 2 < 1024 ? (int)(limit.rlim_cur / 2) : 1024);
    if (high < 0)
        return fd;
    close(fd);
    return high;
}

/* Read the environment once, at the first iteration (never earlier: harnesses construct hooks in
 * processes that never run an iteration). */
static inline void duet_hook_start(struct duet_hook *h)
{
    h->started = 1;
    h->state = DUET_HOOK_OFF;
    h->log_fd = -1;
    const char *side = getenv("DUET_SIDE");
    const char *log = getenv("DUET_ITERATION_LOG");
    const char *barrier = getenv("DUET_BARRIER");
    const char *timeout = getenv("DUET_BARRIER_TIMEOUT_MS");
    if (!side && !log && !barrier)
        return;
    struct duet_shm *page = barrier && *barrier ? duet_map_page(barrier) : NULL;
    if (!side || (side[0] != 'A' && side[0] != 'B') || side[1] != '\0') {
        fprintf(stderr, "duet: DUET_SIDE must be A or B, not '%s'; the duet hook is off\n", side ? side : "");
        if (page) {
            duet_set_abort(page, DUET_ABORT_FAILED); /* so that the partner does not wait for us */
            munmap(page, DUET_SHM_SIZE);
        }
        return;
    }
    h->side = side[0];
    long long ms = DUET_DEFAULT_TIMEOUT_MS;
    if (timeout && *timeout) {
        char *end = NULL;
        errno = 0;
        long long v = strtoll(timeout, &end, 10);
        if (errno || *end != '\0' || v <= 0)
            fprintf(stderr, "duet: DUET_BARRIER_TIMEOUT_MS must be a positive number of milliseconds, not '%s'; "
                            "using %lld\n", timeout, ms);
        else
            ms = v;
    }
    h->timeout_ns = duet_ms_to_ns(ms);
    if (log && *log) {
        h->log_fd = duet_open_log(log);
        if (h->log_fd < 0)
            fprintf(stderr, "duet: cannot open the iteration log DUET_ITERATION_LOG=%s: %s; iterations are not "
                            "logged\n", log, strerror(errno));
        else
            h->log_path = duet_absolute_path(log); /* the harness may change directory */
    }
    h->page = page;
    h->state = page ? DUET_HOOK_SYNCING : DUET_HOOK_LOG_ONLY;
}

/* Kind of the iterations that start from now on: 'w' (warmup), 'm' (measurement), 0 (unknown). */
DUET_API void duet_set_kind(int kind)
{
    duet_hook_instance()->kind = (kind == 'w' || kind == 'm') ? kind : 0;
}

/* Wait for the other side (when synchronizing), then stamp the start. Returns 1 when this iteration
 * was started through the barrier, 0 otherwise (hook off, log only, or synchronization lost). */
DUET_API int duet_before_iteration(void)
{
    struct duet_hook *h = duet_hook_instance();
    if (!h->started)
        duet_hook_start(h);
    if (h->state == DUET_HOOK_OFF)
        return 0;
    int released = 0, result = DUET_RELEASED;
    if (h->state == DUET_HOOK_SYNCING) {
        result = duet_barrier_wait(h->page, h->timeout_ns);
        released = result == DUET_RELEASED;
    }
    h->pending_start = duet_now_ns();
    h->pending = 1;
    h->pending_kind = h->kind;
    if (released) {
        h->synced++;
    } else if (h->state == DUET_HOOK_SYNCING) {
        h->state = DUET_HOOK_SYNC_LOST;
        uint32_t code = DUET_LOAD(&h->page->abort);
        if (result == DUET_TIMED_OUT)
            fprintf(stderr, "duet: side %c stopped synchronizing at iteration %ld: the other side did not arrive "
                            "within %lld ms (DUET_BARRIER_TIMEOUT_MS); going on unsynchronized\n",
                    h->side, h->index, (long long)(h->timeout_ns / 1000000LL));
        else if (result == DUET_ABORTED)
            fprintf(stderr, "duet: side %c stopped synchronizing at iteration %ld: %s (abort code %u); going on "
                            "unsynchronized\n", h->side, h->index, duet_abort_text(code), code);
        else
            fprintf(stderr, "duet: side %c stopped synchronizing at iteration %ld: the barrier page was "
                            "overwritten; going on unsynchronized\n", h->side, h->index);
    }
    return released;
}

/* Stamp the end and append the iteration's line to the log (one write on an O_APPEND file, so that
 * lines of several processes of one side never tear). Returns 1 when a line was written. */
DUET_API int duet_after_iteration(void)
{
    int64_t end = duet_now_ns();
    struct duet_hook *h = duet_hook_instance();
    if (!h->started || h->state == DUET_HOOK_OFF || !h->pending)
        return 0;
    h->pending = 0;
    long index = h->index++;
    if (h->log_fd < 0)
        return 0;
    char line[96];
    int n = h->pending_kind
                ? snprintf(line, sizeof line, "%c %ld %lld %lld %c\n", h->side, index, (long long)h->pending_start,
                           (long long)end, (char)h->pending_kind)
                : snprintf(line, sizeof line, "%c %ld %lld %lld\n", h->side, index, (long long)h->pending_start,
                           (long long)end);
    ssize_t w;
    int reopened = 0;
    for (;;) {
        w = write(h->log_fd, line, (size_t)n);
        if (w < 0 && errno == EINTR)
            continue;
        /* The harness closed our descriptor: open the log again (not close(): the number is not ours). */
        if (w < 0 && errno == EBADF && !reopened && h->log_path) {
            reopened = 1;
            h->log_fd = duet_open_log(h->log_path);
            if (h->log_fd >= 0)
                continue;
        }
        break;
    }
    if (w != (ssize_t)n) {
        if (!h->log_failed)
            fprintf(stderr, "duet: cannot append to the iteration log: %s\n",
                    w < 0 ? strerror(errno) : "short write");
        h->log_failed = 1;
        return 0;
    }
    return 1;
}

DUET_API int duet_hook_state(void)
{
    struct duet_hook *h = duet_hook_instance();
    return h->started ? h->state : DUET_HOOK_NOT_STARTED;
}

/* Iterations of this process that started through the barrier. */
DUET_API long duet_hook_synced(void)
{
    return duet_hook_instance()->synced;
}

/* Iterations of this process completed (the next log index). */
DUET_API long duet_hook_iterations(void)
{
    return duet_hook_instance()->index;
}

#endif /* DUET_PROTOCOL_ONLY */
#endif /* DUET_H */
