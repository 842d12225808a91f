/*
 * duet-workload: artificial workloads with a known amount of work, for checking duetbench against a
 * ground truth (seed 000 §4.4, seed 002 §4; DESIGN.md §4 "Artificial workloads").
 *
 *   duet-workload KIND --ops N [--scale F] [--threads T] [--report]
 *   duet-workload KIND --calibrate MS [--report]
 *
 * Work done is round(N x F) "ops" (half away from zero); an op is a fixed, small unit of work, so
 * `--ops N --scale 1.05` is exactly 5% more work than `--ops N`, and `--ops 2N` twice the work.
 *
 * One op of each KIND (in brackets: time per op measured on an AMD EPYC KVM guest, 2 vCPUs, at -O2):
 *   integer [2.55 us]  float [1.70 us]  cache [1.1 us]  memory [19-27 us]  inc [1.13 us]
 *   integer  1024 dependent xorshift64 + 64-bit multiply steps on one register (runs from L1/registers)
 *   float    1024 dependent steps x = x * a + b on one double (a multiply-add chain; no -ffast-math,
 *            so the compiler may neither reorder nor shorten it)
 *   cache    one 8-byte load from each of 4096 consecutive 64-byte lines of a buffer that fits in the
 *            core's own L2 cache (a quarter of the L2 read at start, a power of two from 64 KiB to 1 MiB;
 *            256 KiB if the L2 size is unknown); the walk wraps around the buffer and the next op
 *            continues where the last stopped
 *   memory   128 dependent loads (pointer chasing) along one random cycle through all cache lines of a
 *            buffer of at least 64 MiB and twice the last-level cache read at start (at most 256 MiB);
 *            the cycle is a seeded Sattolo shuffle, so it is the same every run on a given host
 *   inc      the INC program of seed 002: an inner loop of 4096 increments of an unsigned counter,
 *            each one kept by an empty asm statement (a dependent chain of register adds; see work_inc)
 *
 * Time is proportional to ops because no kind's working set depends on ops: the buffers are sized from
 * the cache hierarchy alone (never from --ops) and are in their steady cache state before the clock
 * starts. The cache buffer is walked once in set-up, so every timed load hits L2 whatever the op count;
 * it used to be 4 MiB in the shared last-level cache, where the hit rate depended on what the other
 * cores (and tenants) did during the run, and 2x the ops took 1.5-2.6x the time on a 1 MiB-L2 EPYC.
 * The memory buffer is at least twice the last-level cache, so that the chase misses the cache on most
 * loads on any host (a 64 MiB buffer would be half cache-resident with a 96 MiB L3) and the part that
 * set-up leaves cached is a minority that the first ops cannot profit from much.
 *
 * Set-up (allocating and initialising the buffers, and the shuffle) runs before the timed work. For
 * integer, float and inc it is nil; for cache and memory it is real (page faults, zeroing, for memory
 * the shuffle) and is paid by every process, so it dilutes an A/B ratio measured on whole processes:
 * --report prints it (setup_ns) next to the work time (work_ns) as one JSON line on stderr:
 *   {"kind": "memory", "ops": 1050, "scale": 1.05, "setup_ns": 10573782, "work_ns": 20611290, "cpu_ns": 20600125}
 * ops is the work done, round(N x F); setup_ns and work_ns are CLOCK_MONOTONIC; cpu_ns is the CPU time of
 * the work (CLOCK_THREAD_CPUTIME_ID), equal to work_ns unless other processes took time slices meanwhile.
 * With --calibrate the line describes the last verification run and adds "calibrate_ms".
 *
 * The result of the work is printed as a checksum line on stdout so the compiler cannot drop the work.
 *
 * --threads T (integer, float and inc) splits the same ops across T threads, each on its own state (the
 * first takes the remainder): the same work, done in parallel where the process has the CPUs, so that a
 * multi-threaded program's parallel speed can be benchmarked against a known truth (--cpus-per-command).
 * Each thread starts from its own state; cpu_ns is every thread's CPU time (CLOCK_PROCESS_CPUTIME_ID) and
 * the checksum the sum of theirs.
 *
 * --calibrate MS finds the N whose work (not set-up) takes about MS milliseconds here: short trials,
 * extrapolation, then a verification run at the full length (corrected once if it is off by > 3%),
 * timed by CPU time so that a busy machine does not skew N. It prints only N on stdout.
 *
 * Exit status: 0 on success, 2 on bad input (one line on stderr), 1 if memory cannot be had.
 * Plain C11 + POSIX (built with -std=gnu11 by setup.py); no dependencies.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define USAGE "usage: duet-workload {integer,float,cache,memory,inc} (--ops N [--scale F] [--threads T] | --calibrate MS) [--report]"
#define MAX_THREADS 256

/* Sizes of one op. Changing them changes what an op is: keep the header comment in step. */
#define INTEGER_STEPS 1024
#define FLOAT_STEPS 1024
#define LINE_BYTES 64
#define CACHE_LINES_PER_OP 4096u                      /* loads per op, whatever the buffer size */
#define CACHE_MIN_BYTES ((size_t)64 << 10)
#define CACHE_MAX_BYTES ((size_t)1 << 20)
#define CACHE_DEFAULT_BYTES ((size_t)256 << 10)       /* L2 size unknown */
#define MEMORY_MIN_BYTES ((size_t)64 << 20)
#define MEMORY_MAX_BYTES ((size_t)256 << 20)     /* sysconf may report a host's 384 MiB "L3" */
#define MEMORY_LOADS_PER_OP 128
#define INC_PER_OP 4096u
#define HUGE_ALIGN ((size_t)2 << 20)
#define MAX_OPS ((uint64_t)1 << 53) /* N x F stays exact in a double below this */

enum kind { K_INTEGER, K_FLOAT, K_CACHE, K_MEMORY, K_INC, K_COUNT };
static const char *const KIND_NAMES[K_COUNT] = {"integer", "float", "cache", "memory", "inc"};

struct workload {
    enum kind kind;
    uint64_t *cache_buf;   /* cache_lines lines */
    size_t cache_lines;    /* a power of two */
    size_t cache_pos;      /* next line of the linear walk */
    void **memory_buf;     /* memory_lines lines, one pointer at the start of each line */
    size_t memory_lines;
    void **memory_pos;     /* current position of the chase */
    uint64_t int_state;
    double float_state;
};

static int64_t clock_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }

/* Only the result's existence matters; the volatile store keeps the work alive across calibration trials. */
static volatile uint64_t g_sink;

/* ---------------------------------------------------------------- bad input */

static void die_usage(const char *fmt, const char *arg) {
    fputs("duet-workload: error: ", stderr);
    fprintf(stderr, fmt, arg);
    fputs(" -- " USAGE "\n", stderr);
    exit(2);
}

static void die_memory(const char *what) {
    fprintf(stderr, "duet-workload: error: cannot allocate the %s buffer: %s\n", what, strerror(errno));
    exit(1);
}

/* ---------------------------------------------------------------- set-up */

static uint64_t splitmix64(uint64_t *s) {
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

/* Anonymous memory aligned to 2 MiB and, where the kernel allows, backed by transparent huge pages:
 * 32 faults instead of 16384 for 64 MiB (faster set-up and exit) and few TLB misses in the walk, so the
 * memory workload measures cache misses more than TLB misses. Falls back to ordinary pages silently. */
static void *alloc_buffer(size_t bytes, const char *what) {
    size_t len = bytes + HUGE_ALIGN;
    char *raw = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) die_memory(what);
    uintptr_t aligned = ((uintptr_t)raw + HUGE_ALIGN - 1) & ~(uintptr_t)(HUGE_ALIGN - 1);
#ifdef MADV_HUGEPAGE
    (void)madvise((void *)aligned, bytes, MADV_HUGEPAGE);
#endif
    return (void *)aligned;
}

static void free_buffer(void *aligned, size_t bytes) {
    /* Unmaps at least the aligned part; the up-to-2 MiB of alignment slack stays mapped, untouched. */
    (void)munmap(aligned, bytes);
}

/* ---------------------------------------------------------------- cache hierarchy */

/* "48K", "1024K", "32M" as in /sys/devices/system/cpu/cpu0/cache/index*\/size; 0 if unreadable. */
static size_t read_size_file(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    unsigned long long v = 0;
    char unit = 0;
    int n = fscanf(f, "%llu%c", &v, &unit);
    fclose(f);
    if (n < 1) return 0;
    if (unit == 'K' || unit == 'k') v <<= 10;
    else if (unit == 'M' || unit == 'm') v <<= 20;
    else if (unit == 'G' || unit == 'g') v <<= 30;
    return (size_t)v;
}

/* Size of this CPU's data or unified cache of the given level, 0 if unknown. sysfs first: in a VM,
 * sysconf may report the host's cache (seen: a 384 MiB "L3" in a guest whose sysfs says 32 MiB), and
 * on arm64 glibc's sysconf often reports nothing. */
static size_t cache_size(int level) {
    char path[96], text[32];
    for (int index = 0; index < 8; index++) {
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", index);
        FILE *f = fopen(path, "r");
        if (!f) break;
        int found = 0;
        if (fscanf(f, "%d", &found) != 1) found = -1;
        fclose(f);
        if (found != level) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", index);
        f = fopen(path, "r");
        if (!f) continue;
        int ok = fscanf(f, "%31s", text) == 1 && strcmp(text, "Instruction") != 0;
        fclose(f);
        if (!ok) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", index);
        size_t bytes = read_size_file(path);
        if (bytes) return bytes;
    }
#if defined(_SC_LEVEL2_CACHE_SIZE) && defined(_SC_LEVEL3_CACHE_SIZE)
    long v = sysconf(level == 2 ? _SC_LEVEL2_CACHE_SIZE : _SC_LEVEL3_CACHE_SIZE);
    if (v > 0) return (size_t)v;
#endif
    return 0;
}

static size_t floor_pow2(size_t v) {
    size_t p = 1;
    while (p <= v / 2) p *= 2;
    return p;
}

/* A quarter of L2, in one huge page where the kernel gives one (setup_cache). Without one, the random
 * physical placement of 4 KiB pages can still make one process slower than another (see setup_cache). */
static size_t cache_buffer_bytes(void) {
    size_t l2 = cache_size(2);
    size_t bytes = l2 ? floor_pow2(l2 / 4) : CACHE_DEFAULT_BYTES;
    if (bytes < CACHE_MIN_BYTES) bytes = CACHE_MIN_BYTES;
    if (bytes > CACHE_MAX_BYTES) bytes = CACHE_MAX_BYTES;
    return bytes;
}

/* At least twice the last level, so that whatever set-up leaves cached is a minority of the cycle and is
 * gone before the chase comes back to it. */
static size_t memory_buffer_bytes(void) {
    size_t llc = cache_size(3);
    if (!llc) llc = cache_size(2);
    size_t bytes = MEMORY_MIN_BYTES;
    while (bytes < 2 * llc && bytes < MEMORY_MAX_BYTES) bytes *= 2;
    return bytes;
}

static void setup_cache(struct workload *w) {
    size_t bytes = cache_buffer_bytes();
    w->cache_lines = bytes / LINE_BYTES;
    /* The whole 2 MiB-aligned region, so that one transparent huge page can back it: then the buffer is
     * physically contiguous and maps onto the L2's sets the same way in every process. With 4 KiB pages
     * at random physical addresses, a 128 KiB buffer in a 512 KiB L2 (AMD EPYC VM) ran at one of two
     * speeds per process, 2x apart (9550 ops: ~30 or ~58 ms, in 4 of 40 runs the fast one); in one huge
     * page 40 of 40 took 28-36 ms. The cost: ~0.3 ms more set-up (faulting and zeroing 2 MiB). */
    w->cache_buf = alloc_buffer(bytes > HUGE_ALIGN ? bytes : HUGE_ALIGN, "cache");
    uint64_t seed = 0xC0FFEE;
    const size_t stride = LINE_BYTES / sizeof(uint64_t);
    for (size_t line = 0; line < w->cache_lines; line++) w->cache_buf[line * stride] = splitmix64(&seed);
    /* One untimed read pass: after the writes the lines may sit modified in L1 or partly in L3; after
     * this they are where every timed op will find them, so op 1 costs what op 1000 costs. */
    uint64_t sum = 0;
    for (size_t line = 0; line < w->cache_lines; line++) sum += w->cache_buf[line * stride];
    g_sink = sum;
    w->cache_pos = 0;
}

static void setup_memory(struct workload *w) {
    /* Sattolo's shuffle of the line numbers yields a permutation that is one single cycle; line i then
     * points at line next[i]. The shuffle runs on an index array of 4 bytes per line, and the buffer is
     * written once, in address order, so set-up is page faults plus one sequential pass. (Writing along
     * the cycle instead would leave exactly the lines the chase reaches last in the cache, but it made
     * set-up 5-8x longer, 50-90 ms, for no difference measurable on a 32 MiB-L3 EPYC.) */
    const size_t bytes = memory_buffer_bytes();
    const uint32_t lines = (uint32_t)(bytes / LINE_BYTES);
    w->memory_lines = lines;
    uint32_t *next = alloc_buffer(sizeof(uint32_t) * lines, "memory index");
    for (uint32_t i = 0; i < lines; i++) next[i] = i;
    uint64_t seed = 0x5EED0F5A770710ULL;
    for (uint32_t i = lines - 1; i > 0; i--) {
        uint32_t j = (uint32_t)(((splitmix64(&seed) >> 32) * i) >> 32); /* uniform in [0, i) */
        uint32_t t = next[i];
        next[i] = next[j];
        next[j] = t;
    }
    w->memory_buf = alloc_buffer(bytes, "memory");
    const size_t stride = LINE_BYTES / sizeof(void *);
    for (uint32_t i = 0; i < lines; i++) w->memory_buf[(size_t)i * stride] = &w->memory_buf[(size_t)next[i] * stride];
    free_buffer(next, sizeof(uint32_t) * lines);
    w->memory_pos = w->memory_buf;
}

static void setup(struct workload *w, enum kind kind) {
    memset(w, 0, sizeof *w);
    w->kind = kind;
    w->int_state = 0x9E3779B97F4A7C15ULL;
    w->float_state = 1.0;
    if (kind == K_CACHE) setup_cache(w);
    if (kind == K_MEMORY) setup_memory(w);
}

/* ---------------------------------------------------------------- the work */

static uint64_t work_integer(struct workload *w, uint64_t ops) {
    uint64_t x = w->int_state;
    for (uint64_t op = 0; op < ops; op++) {
        for (int i = 0; i < INTEGER_STEPS; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x *= 0x2545F4914F6CDD1DULL; /* odd: a non-zero state stays non-zero */
        }
    }
    w->int_state = x;
    return x;
}

static uint64_t work_float(struct workload *w, uint64_t ops) {
    /* Converges to b / (1 - a) = 1000, never to zero or to denormals, so every step costs the same. */
    const double a = 0.9990234375, b = 0.9765625;
    double x = w->float_state;
    for (uint64_t op = 0; op < ops; op++) {
        for (int i = 0; i < FLOAT_STEPS; i++) x = x * a + b;
    }
    w->float_state = x;
    uint64_t bits;
    memcpy(&bits, &x, sizeof bits);
    return bits;
}

static uint64_t work_cache(struct workload *w, uint64_t ops) {
    const size_t stride = LINE_BYTES / sizeof(uint64_t);
    const size_t mask = w->cache_lines - 1; /* cache_lines is a power of two */
    const uint64_t *buf = w->cache_buf;
    uint64_t sum = 0;
    size_t pos = w->cache_pos;
    for (uint64_t op = 0; op < ops; op++) {
        for (unsigned i = 0; i < CACHE_LINES_PER_OP; i++) sum += buf[((pos + i) & mask) * stride];
        pos = (pos + CACHE_LINES_PER_OP) & mask;
    }
    w->cache_pos = pos;
    return sum;
}

static uint64_t work_memory(struct workload *w, uint64_t ops) {
    void **p = w->memory_pos;
    for (uint64_t op = 0; op < ops; op++) {
        for (int i = 0; i < MEMORY_LOADS_PER_OP; i++) p = (void **)*p;
    }
    w->memory_pos = p;
    return (uint64_t)(p - w->memory_buf);
}

/* The empty asm tells the compiler that k may have changed, so it must do every increment (a dependent
 * chain of register adds, one per cycle) instead of adding INC_PER_OP at once. Two simpler forms were
 * tried and rejected because their speed changed from run to run (AMD EPYC guest: 1.1 to 2.1 us per op),
 * which a ground truth cannot have: a volatile counter (its store-to-load round trip depends on memory
 * renaming) and a one-increment-per-turn loop (bound by the loop branch, so by front-end sharing). With
 * 8 increments per turn the add chain sets the pace: 1.12-1.15 us per op across runs. */
#if defined(__GNUC__) || defined(__clang__)
#define KEEP_IN_REGISTER(x) __asm__ volatile("" : "+r"(x))
#else
#define KEEP_IN_REGISTER(x) ((void)0)
#endif

static uint64_t work_inc(struct workload *w, uint64_t ops) {
    (void)w;
#if defined(__GNUC__) || defined(__clang__)
    unsigned k = 0;
#else
    volatile unsigned k = 0; /* fallback for other compilers */
#endif
    for (uint64_t op = 0; op < ops; op++) {
        for (unsigned i = 0; i < INC_PER_OP / 8; i++) {
            k++; KEEP_IN_REGISTER(k); k++; KEEP_IN_REGISTER(k); k++; KEEP_IN_REGISTER(k); k++; KEEP_IN_REGISTER(k);
            k++; KEEP_IN_REGISTER(k); k++; KEEP_IN_REGISTER(k); k++; KEEP_IN_REGISTER(k); k++; KEEP_IN_REGISTER(k);
        }
    }
    return k;
}

struct timing {
    int64_t wall_ns; /* CLOCK_MONOTONIC */
    int64_t cpu_ns;  /* this thread's CPU time: the same on an idle machine, without other processes' slices */
};

static uint64_t work(struct workload *w, uint64_t ops) {
    switch (w->kind) {
    case K_INTEGER: return work_integer(w, ops);
    case K_FLOAT: return work_float(w, ops);
    case K_CACHE: return work_cache(w, ops);
    case K_MEMORY: return work_memory(w, ops);
    case K_INC: return work_inc(w, ops);
    case K_COUNT: break;
    }
    return 0;
}

/* One thread's share of a --threads run: its own copy of the (register-only) state. */
struct share {
    struct workload w;
    uint64_t ops, result;
};

static void *work_share(void *arg) {
    struct share *sh = arg;
    sh->result = work(&sh->w, sh->ops);
    return NULL;
}

/* `ops` ops split across `threads` threads (this one included), the first taking the remainder; the sum
 * of their results. 1 if a thread cannot be made (errno set). */
static int work_threads(struct workload *w, uint64_t ops, int threads, uint64_t *result) {
    static struct share shares[MAX_THREADS];
    static pthread_t ids[MAX_THREADS];
    for (int t = 0; t < threads; t++) {
        shares[t].w = *w;
        /* each its own start, so that equal shares do not compute (and cancel) the same result */
        shares[t].w.int_state += (uint64_t)t * 0x9E3779B97F4A7C15ULL;
        shares[t].w.float_state += t;
        shares[t].ops = ops / (uint64_t)threads + (t == 0 ? ops % (uint64_t)threads : 0);
    }
    int made = 1;
    for (; made < threads; made++)
        if ((errno = pthread_create(&ids[made], NULL, work_share, &shares[made])) != 0)
            break;
    work_share(&shares[0]);
    uint64_t r = shares[0].result;
    for (int t = 1; t < made; t++) {
        pthread_join(ids[t], NULL);
        r += shares[t].result;
    }
    *result = r;
    return made == threads ? 0 : 1;
}

/* Runs `ops` ops (on `threads` threads) and times them. The CPU clock is read outside the wall-clock
 * window. */
static struct timing run(struct workload *w, uint64_t ops, int threads, uint64_t *checksum) {
    uint64_t r = 0;
    clockid_t cpu_clock = threads > 1 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID;
    int64_t c0 = clock_ns(cpu_clock);
    int64_t t0 = now_ns();
    if (threads > 1) {
        if (work_threads(w, ops, threads, &r) != 0) {
            fprintf(stderr, "duet-workload: cannot start %d threads: %s\n", threads, strerror(errno));
            exit(1);
        }
    } else {
        r = work(w, ops);
    }
    g_sink = r; /* a global store before the clock call: the work cannot be moved past the second stamp */
    int64_t t1 = now_ns();
    int64_t c1 = clock_ns(cpu_clock);
    if (checksum) *checksum = r;
    return (struct timing){t1 - t0, c1 - c0};
}

/* ---------------------------------------------------------------- calibration */

static uint64_t clamp_ops(double n) {
    if (!(n >= 1.0)) return 1;
    if (n >= (double)MAX_OPS) return MAX_OPS;
    return (uint64_t)llround(n);
}

/* N such that run(N) takes about target_ns. Trials grow geometrically up to about a quarter of the target
 * (at most 100 ms), then one extrapolated run at full length verifies, and corrects once if > 3% off.
 * Trials are timed by this thread's CPU time, which on an idle machine equals the wall time of the work,
 * so that calibrating on a busy machine does not give too small an N because of others' time slices. */
static uint64_t calibrate(struct workload *w, double target_ns, struct timing *last) {
    double trial_ns = target_ns / 4 < 100e6 ? target_ns / 4 : 100e6;
    uint64_t n = 1;
    struct timing tm = run(w, n, 1, NULL);
    int64_t t = tm.cpu_ns;
    while ((double)t < trial_ns && n < MAX_OPS) {
        double factor = 1.5 * trial_ns / (double)(t > 1000 ? t : 1000);
        if (factor < 2) factor = 2;
        if (factor > 64) factor = 64;
        n = clamp_ops((double)n * factor);
        t = (tm = run(w, n, 1, NULL)).cpu_ns;
    }
    n = clamp_ops((double)n * target_ns / (double)(t > 0 ? t : 1));
    t = (tm = run(w, n, 1, NULL)).cpu_ns;
    double off = (double)(t > 0 ? t : 1) / target_ns;
    if (off < 0.97 || off > 1.03) {
        n = clamp_ops((double)n / off);
        tm = run(w, n, 1, NULL);
    }
    *last = tm;
    return n;
}

/* ---------------------------------------------------------------- command line */

static int parse_kind(const char *s) {
    for (int k = 0; k < K_COUNT; k++)
        if (strcmp(s, KIND_NAMES[k]) == 0) return k;
    return -1;
}

/* A whole number from 0 to `max` for option `opt` (--ops, --threads): the message names that option. */
static uint64_t parse_count(const char *opt, const char *s, uint64_t max) {
    static char msg[128];
    const char *why = NULL;
    if (*s == '\0') why = "%s needs a whole number, got an empty value%%s";
    else if (s[0] == '-' && s[1] >= '0' && s[1] <= '9') why = "%s must not be negative, got '%%s'";
    for (const char *c = s; !why && *c; c++)
        if (*c < '0' || *c > '9') why = "%s needs a whole number, got '%%s'";
    errno = 0;
    unsigned long long v = why ? 0 : strtoull(s, NULL, 10);
    if (!why && (errno == ERANGE || v > max)) why = "%s is too large: '%%s' (at most %llu)";
    if (why) {
        snprintf(msg, sizeof msg, why, opt, (unsigned long long)max);
        die_usage(msg, s);
    }
    return (uint64_t)v;
}

static double parse_positive(const char *opt, const char *s) {
    char *end = NULL;
    errno = 0;
    double v = strtod(s, &end);
    static char msg[96];
    if (*s == '\0' || end == s || *end != '\0') {
        snprintf(msg, sizeof msg, "%s needs a number, got '%%s'", opt);
        die_usage(msg, s);
    }
    if (errno == ERANGE) { /* a number, but beyond what a double holds (1e400, 1e-400) */
        snprintf(msg, sizeof msg, "%s is out of range, got '%%s'", opt);
        die_usage(msg, s);
    }
    if (!isfinite(v)) {
        snprintf(msg, sizeof msg, "%s needs a finite number, got '%%s'", opt);
        die_usage(msg, s);
    }
    if (!(v > 0)) {
        snprintf(msg, sizeof msg, "%s must be positive, got '%%s'", opt);
        die_usage(msg, s);
    }
    return v;
}

/* The shortest decimal that reads back as the same double. */
static void format_double(char *buf, size_t size, double v) {
    if (v == floor(v) && fabs(v) < 1e15) {
        snprintf(buf, size, "%.0f", v);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, size, "%.*g", prec, v);
        if (strtod(buf, NULL) == v) return;
    }
}

static void print_help(void) {
    fputs(USAGE "\n\n"
          "Runs round(N x F) ops of an artificial workload; --scale 1.05 is a known 5% more work.\n"
          "One op is:\n"
          "  integer  1024 dependent xorshift64*-multiply steps (registers / L1)\n"
          "  float    1024 dependent x = x*a + b steps on a double (registers / L1)\n"
          "  cache    a linear walk over 4096 64-byte lines of an L2-resident buffer (1/4 of L2, 64 KiB-1 MiB)\n"
          "  memory   128 dependent loads along a random cycle through >= 64 MiB (and >= 2x LLC; pointer chase)\n"
          "  inc      4096 increments of a counter in a register (the INC program)\n"
          "Options:\n"
          "  --ops N          base number of ops (whole number >= 0)\n"
          "  --scale F        multiply the op count by F > 0 (default 1)\n"
          "  --threads T      split the ops across T threads (integer, float, inc; default 1)\n"
          "  --calibrate MS   print the N whose work takes about MS milliseconds on this machine\n"
          "  --report         print {\"kind\",\"ops\",\"scale\",\"setup_ns\",\"work_ns\",\"cpu_ns\"} as JSON on stderr\n"
          "stdout gets a checksum line (or only N with --calibrate).\n",
          stdout);
}

int main(int argc, char **argv) {
    int kind = -1;
    const char *ops_arg = NULL, *scale_arg = NULL, *calibrate_arg = NULL, *threads_arg = NULL;
    int report = 0;

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **slot = NULL;
        const char *name = NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            print_help();
            return 0;
        } else if (strcmp(a, "--report") == 0) {
            report = 1;
            continue;
        } else if (strncmp(a, "--ops", 5) == 0 && (a[5] == '\0' || a[5] == '=')) {
            slot = &ops_arg, name = "--ops";
        } else if (strncmp(a, "--scale", 7) == 0 && (a[7] == '\0' || a[7] == '=')) {
            slot = &scale_arg, name = "--scale";
        } else if (strncmp(a, "--threads", 9) == 0 && (a[9] == '\0' || a[9] == '=')) {
            slot = &threads_arg, name = "--threads";
        } else if (strncmp(a, "--calibrate", 11) == 0 && (a[11] == '\0' || a[11] == '=')) {
            slot = &calibrate_arg, name = "--calibrate";
        } else if (a[0] == '-' && a[1] != '\0') {
            die_usage("unknown option '%s'", a);
        } else if (kind >= 0) {
            die_usage("unexpected extra argument '%s'", a);
        } else if ((kind = parse_kind(a)) < 0) {
            die_usage("unknown kind '%s' (kinds: integer, float, cache, memory, inc)", a);
        }
        if (slot) {
            const char *eq = strchr(a, '=');
            if (eq) {
                *slot = eq + 1;
            } else if (i + 1 < argc) {
                *slot = argv[++i];
            } else {
                die_usage("%s needs a value", name);
            }
        }
    }

    if (kind < 0) die_usage("missing KIND (one of integer, float, cache, memory, inc)%s", "");
    if (calibrate_arg && ops_arg) die_usage("give either --ops or --calibrate, not both%s", "");
    if (calibrate_arg && scale_arg) die_usage("--scale applies to --ops runs, not to --calibrate%s", "");
    if (!calibrate_arg && !ops_arg) die_usage("missing --ops N (or --calibrate MS)%s", "");
    int threads = 1;
    if (threads_arg) {
        if (calibrate_arg)
            die_usage("--threads applies to --ops runs: calibrate without it (the same N is the same work, split)%s", "");
        uint64_t t = parse_count("--threads", threads_arg, MAX_THREADS);
        if (t < 1 || t > MAX_THREADS) die_usage("--threads needs 1 to 256 threads, got '%s'", threads_arg);
        if (kind == K_CACHE || kind == K_MEMORY)
            die_usage("--threads applies to integer, float and inc, whose state is in registers, not to %s",
                      KIND_NAMES[kind]);
        threads = (int)t;
    }

    double scale = 1.0, target_ms = 0;
    uint64_t ops = 0;
    if (calibrate_arg) {
        target_ms = parse_positive("--calibrate", calibrate_arg);
        if (target_ms > 1e7) die_usage("--calibrate is too large: '%s' ms", calibrate_arg);
    } else {
        uint64_t base = parse_count("--ops", ops_arg, MAX_OPS);
        if (scale_arg) scale = parse_positive("--scale", scale_arg);
        long double product = (long double)base * (long double)scale;
        if (product >= (long double)MAX_OPS) die_usage("--ops x --scale is too large (at most 2^53 ops)%s", "");
        ops = (uint64_t)llroundl(product);
    }

    struct workload w;
    int64_t t0 = now_ns();
    setup(&w, (enum kind)kind);
    int64_t setup_ns = now_ns() - t0;

    struct timing timed;
    uint64_t checksum = 0;
    if (calibrate_arg) {
        ops = calibrate(&w, target_ms * 1e6, &timed);
        printf("%llu\n", (unsigned long long)ops);
    } else {
        timed = run(&w, ops, threads, &checksum);
        printf("%s checksum %016llx\n", KIND_NAMES[kind], (unsigned long long)checksum);
    }
    if (fflush(stdout) != 0) return 1;

    if (report) {
        char scale_text[32];
        format_double(scale_text, sizeof scale_text, scale);
        fprintf(stderr,
                "{\"kind\": \"%s\", \"ops\": %llu, \"scale\": %s, \"setup_ns\": %lld, \"work_ns\": %lld, \"cpu_ns\": %lld",
                KIND_NAMES[kind], (unsigned long long)ops, scale_text, (long long)setup_ns, (long long)timed.wall_ns,
                (long long)timed.cpu_ns);
        if (calibrate_arg) {
            char target_text[32];
            format_double(target_text, sizeof target_text, target_ms);
            fprintf(stderr, ", \"calibrate_ms\": %s", target_text);
        }
        fputs("}\n", stderr);
    }
    return 0;
}
