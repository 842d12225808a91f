/*
 * duet barrier protocol, version 1 — the shared page both sides of a duet meet on.
 *
 * A barrier is a file (normally under /dev/shm) of DUET_SHM_SIZE bytes, mapped MAP_SHARED by every
 * party.  Layout (little-endian, offsets in bytes):
 *
 *   0   u32 magic       DUET_MAGIC ("DUET")
 *   4   u32 version     DUET_PROTOCOL_VERSION
 *   8   u32 parties     number of processes that must arrive before release (2 for a duet)
 *   12  u32 abort       0 = fine; otherwise a DUET_ABORT_* reason. Once set, every wait returns at once.
 *   64  u32 arrived     parties arrived in the current generation (own cache line)
 *   128 u64 generation  incremented by the last arrival; waiters spin until it changes (own cache line)
 *
 * Waiters spin (with a pause instruction), not futex-wait: on 2-vCPU VMs a futex wake-up costs
 * ~15 us plus millisecond tails, a spin release ~0.1 us (notes/machine_probe.md section 9).
 * A wait gives up after a timeout and sets abort, so one side failing never hangs the other.
 *
 * Header-only so that the launcher and adapters/c/duet.h share one implementation.
 */
#ifndef DUET_BARRIER_H
#define DUET_BARRIER_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#define DUET_MAGIC 0x54455544u /* "DUET" */
#define DUET_PROTOCOL_VERSION 1u
#define DUET_SHM_SIZE 4096

enum duet_abort_reason {
    DUET_ABORT_NONE = 0,
    DUET_ABORT_TIMEOUT = 1,  /* a party waited longer than its timeout */
    DUET_ABORT_FAILED = 2,   /* a party failed before arriving (set by a launcher or the orchestrator) */
    DUET_ABORT_USER = 3,     /* the orchestrator was interrupted */
};

enum duet_wait_result {
    DUET_RELEASED = 0,
    DUET_TIMED_OUT = 1,
    DUET_ABORTED = 2,
    DUET_BAD_PAGE = 3,
};

struct duet_shm {
    _Atomic uint32_t magic;
    _Atomic uint32_t version;
    _Atomic uint32_t parties;
    _Atomic uint32_t abort;
    char pad0[64 - 16];
    _Atomic uint32_t arrived;
    char pad1[64 - 4];
    _Atomic uint64_t generation;
    char pad2[DUET_SHM_SIZE - 136];
};

_Static_assert(sizeof(struct duet_shm) == DUET_SHM_SIZE, "duet_shm must be one page");

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
    return atomic_load(&s->magic) == DUET_MAGIC && atomic_load(&s->version) == DUET_PROTOCOL_VERSION &&
           atomic_load(&s->parties) >= 1;
}

static inline void duet_set_abort(struct duet_shm *s, uint32_t reason)
{
    uint32_t expected = DUET_ABORT_NONE;
    atomic_compare_exchange_strong(&s->abort, &expected, reason);
}

/* Wait until all parties have arrived. timeout_ns <= 0 means wait forever (not recommended). */
static inline int duet_barrier_wait(struct duet_shm *s, int64_t timeout_ns)
{
    if (!duet_page_valid(s))
        return DUET_BAD_PAGE;
    if (atomic_load(&s->abort))
        return DUET_ABORTED;
    /* Read the clock before arriving, also when we turn out to be last: the first clock_gettime of a
     * fresh process faults in the vDSO data page, which would otherwise delay the releasing side's
     * timestamp by microseconds. */
    int64_t deadline = timeout_ns > 0 ? duet_now_ns() + timeout_ns : (duet_now_ns(), INT64_MAX);
    uint64_t gen = atomic_load(&s->generation);
    uint32_t n = atomic_fetch_add(&s->arrived, 1) + 1;
    if (n >= atomic_load(&s->parties)) {
        atomic_store(&s->arrived, 0);
        atomic_fetch_add(&s->generation, 1);
        return DUET_RELEASED;
    }
    unsigned spins = 0;
    while (atomic_load_explicit(&s->generation, memory_order_acquire) == gen) {
        duet_cpu_relax();
        if ((++spins & 1023u) == 0) {
            if (atomic_load(&s->abort))
                return DUET_ABORTED;
            if (duet_now_ns() > deadline) {
                duet_set_abort(s, DUET_ABORT_TIMEOUT);
                return DUET_TIMED_OUT;
            }
        }
    }
    return DUET_RELEASED;
}

#endif
