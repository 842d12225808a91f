/*
 * duet-launch: run invocations of a command and measure them, the way Python cannot.
 *
 *   duet-launch --result FILE [--cpu LIST] [--barrier PATH] [--barrier-timeout-ms MS]
 *               [--timeout-ms MS] [--cgroup DIR] [--parent PID] -- PROGRAM [ARGS...]
 *   duet-launch --serve RESULT_FD [--go GO_FD] [--done DONE_FD] [--parent PID]
 *
 * --parent: the orchestrator's pid; the launcher ends (its command killed, nothing more launched) when
 * its parent is not, or no longer, that process.
 *
 * The first form runs one invocation and writes one JSON object to FILE. The second is a long-lived
 * launcher for one CPU: it reads requests on stdin and answers each with one JSON line on RESULT_FD,
 * so that a comparison of N pairs costs one process creation per invocation (the command's own fork
 * and exec) instead of a Python Popen plus a launcher exec per side and pair.
 *
 * Request (serve mode): 8 hex digits and '\n' giving the length of a payload of NUL-terminated
 * "key=value" entries: cpu (a CPU list: 3, 2,3, 0-3), barrier, barrier_timeout_ms, timeout_ms, cgroup, stdin, stdout, stderr,
 * cwd (one each, optional; without stdin the command reads /dev/null), env=NAME=VALUE (any number, set on top of the inherited environment) and
 * arg=... (the command, in order, at least one). Without stdout/stderr the command inherits ours.
 * With hold=1 the launcher forks at once and its child reads one byte from GO_FD (shared by the
 * launchers of a duet) before it sets up and starts the command: the orchestrator sends both sides'
 * requests, then releases both with one write. Otherwise the first side's child, spinning at the start
 * barrier, could hold the CPU the orchestrator still needs to send the second side's request. The byte
 * is "g" to run the request; "s" skips it (the answer's status is "skipped"): the orchestrator sends a
 * pair's requests as soon as the previous pair ended, before its stop rule knows whether the pair will
 * run (execute/runner.py).
 * Queued pairs (execute/runner.py `_run_queued`): the orchestrator sends a launcher many requests at once,
 * which it runs one after another as it reads them. barrier_slot=K makes the child meet its partner at
 * page K of the barrier file (one page per queued pair: a page ends its pair aborted); halt_slot=H names
 * the page whose abort halts the queue: set once an invocation fails (halt_failed=1: also on a non-zero
 * exit or a signal, which --ignore-failure times), after which the launcher answers its queued requests
 * "skipped" and aborts their pages. meet=1 forks the child only once the partner's launcher is ready to
 * fork its own (meet_partner). notify=1 writes a byte to DONE_FD once answered (the orchestrator sleeps on
 * that pipe, not on the answers);
 * journal=PATH also appends the answer to PATH (kept should the orchestrator be killed, execute/journal.py).
 * SIGUSR1 cancels the invocation in progress (reported as "interrupted") and the server goes on;
 * SIGTERM/SIGINT/SIGHUP cancel it and end the server after its answer; EOF on stdin ends it too.
 *
 * Why native (notes/machine_probe.md):
 *  - a child forked from Python inherits Python's RSS high-water mark into ru_maxrss; forked from this
 *    small process it does not;
 *  - two processes launched from Python start 0.1-1.6 ms apart; here each side is pinned, prepared and
 *    then held at a shared-memory spin barrier *after* fork, so both are released within about a
 *    microsecond and exec the command right away;
 *  - as a child subreaper it also collects the CPU time of daemonized grandchildren, which wait4 on the
 *    direct child alone would miss.
 *
 * Flow of one invocation: pin self -> fork. Child: own process group, its stdio, environment and
 * directory, join the cgroup, wait at the barrier, stamp CLOCK_MONOTONIC, report the stamp through a
 * close-on-exec pipe, exec. Parent: sleeps in read() and wait4() (it never polls), enforces the timeout
 * with a timer, kills what the command left behind, reaps it, and writes one JSON object.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/types.h>
#include <linux/futex.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "duet_barrier.h"

enum msg_kind { MSG_STARTED = 1, MSG_EXEC_FAILED = 2, MSG_BARRIER_FAILED = 3, MSG_CGROUP_FAILED = 4, MSG_SETUP_FAILED = 5,
                MSG_SKIPPED = 6 };

struct child_msg {
    int32_t kind;
    int32_t value; /* errno or barrier result */
    int64_t start_ns;
    int64_t pre_exec_cpu_ns; /* CPU the child spent before exec (mostly spinning at the barrier) */
    int32_t cpu;
};

/* One invocation to run. Strings point into argv (one-shot) or into the request buffer (serve). */
struct request {
    int cpu;        /* the lowest CPU of cpus, -1: not pinned */
    int cpu_count;  /* how many CPUs cpus holds (a multi-threaded command gets several: --cpus-per-command) */
    cpu_set_t cpus;
    const char *barrier_path;
    long barrier_slot; /* page of the barrier file this pair meets at (queued pairs: one each) */
    long halt_slot;    /* >= 0: page whose abort field halts the queue (a failed pair: run no more) */
    int meet;          /* fork only once the partner's launcher is ready to fork its child too (meet_partner) */
    int halt_failed;   /* a "failed" or "signaled" end halts the queue too (else only other failures do) */
    int notify;        /* once answered, write a byte to the done pipe (the last of a queued batch) */
    const char *journal; /* append the answer to this file too (queued pairs: kept should the orchestrator die) */
    long barrier_timeout_ms;
    long timeout_ms;
    const char *cgroup_dir;
    const char *stdin_path;  /* NULL: /dev/null in serve mode, else ours */
    const char *stdout_path; /* NULL: inherit */
    const char *stderr_path; /* NULL: inherit */
    const char *cwd;         /* NULL: ours */
    char **env;              /* NAME=VALUE entries set in the child; NULL-terminated */
    char **cmd;              /* NULL-terminated */
};

static volatile sig_atomic_t g_timed_out = 0;
static volatile sig_atomic_t g_interrupted = 0; /* SIGTERM & co.: stop, and (serve) end the server */
static volatile sig_atomic_t g_cancelled = 0;   /* SIGUSR1 (serve): stop this invocation only */
static volatile pid_t g_child = -1;

/* Kill the command: its process group, and the child itself in case it has not set up its group yet. */
static void kill_child(void)
{
    pid_t child = g_child;
    if (child > 0) {
        kill(-child, SIGKILL);
        kill(child, SIGKILL);
    }
}

static void on_alarm(int sig)
{
    (void)sig;
    g_timed_out = 1;
    kill_child();
}

static void on_terminate(int sig)
{
    (void)sig;
    g_interrupted = 1;
    kill_child();
}

static void on_cancel(int sig)
{
    (void)sig;
    g_cancelled = 1;
    kill_child();
}

static void usage_error(const char *msg)
{
    fprintf(stderr, "duet-launch: %s\nusage: duet-launch --result FILE [--cpu LIST] [--barrier PATH] "
                    "[--barrier-timeout-ms MS] [--timeout-ms MS] [--cgroup DIR] [--parent PID] -- PROGRAM [ARGS...]\n"
                    "       duet-launch --serve RESULT_FD [--go GO_FD] [--done DONE_FD] [--parent PID]\n",
            msg);
    exit(2);
}

static void json_escape(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static int write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = write(fd, text, strlen(text));
    int saved = errno;
    close(fd);
    errno = saved;
    return n < 0 ? -1 : 0;
}

static int write_all(int fd, const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* SIGKILL every direct child still alive: after the main command exits, what it left behind
 * (daemons re-parented to us as subreaper) must not keep running into the next invocation. */
static void kill_remaining_children(void)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", (int)getpid());
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    int pid;
    while (fscanf(f, "%d", &pid) == 1)
        kill(pid, SIGKILL);
    fclose(f);
}

/* Counts one reaped orphan into `sum` (times added, the largest RSS kept). */
static void add_orphan(struct rusage *sum, const struct rusage *ru, int *orphans)
{
    (*orphans)++;
    timeradd(&sum->ru_utime, &ru->ru_utime, &sum->ru_utime);
    timeradd(&sum->ru_stime, &ru->ru_stime, &sum->ru_stime);
    if (ru->ru_maxrss > sum->ru_maxrss)
        sum->ru_maxrss = ru->ru_maxrss;
    sum->ru_nvcsw += ru->ru_nvcsw;
    sum->ru_nivcsw += ru->ru_nivcsw;
    sum->ru_minflt += ru->ru_minflt;
    sum->ru_majflt += ru->ru_majflt;
}

/* The barrier file, mapped once per path: a server keeps it between invocations. A file of several
 * pages holds one page per queued pair (a request's barrier_slot) and the batch's halt flag. */
static struct duet_shm *g_shm = NULL;
static size_t g_shm_pages = 0;
static char g_shm_path[PATH_MAX] = "";

static struct duet_shm *map_barrier(const char *path, long slot)
{
    if (!(g_shm && strcmp(g_shm_path, path) == 0)) {
        if (g_shm) {
            munmap(g_shm, g_shm_pages * DUET_SHM_SIZE);
            g_shm = NULL;
            g_shm_pages = 0;
            g_shm_path[0] = '\0';
        }
        int fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0)
            return NULL;
        struct stat st;
        if (fstat(fd, &st) != 0 || st.st_size < DUET_SHM_SIZE) {
            close(fd);
            return NULL;
        }
        size_t pages = (size_t)st.st_size / DUET_SHM_SIZE;
        void *p = mmap(NULL, pages * DUET_SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (p == MAP_FAILED)
            return NULL;
        g_shm = p;
        g_shm_pages = pages;
        snprintf(g_shm_path, sizeof g_shm_path, "%s", path);
    }
    if (slot < 0 || (size_t)slot >= g_shm_pages)
        return NULL;
    return g_shm + slot;
}

/* Parse a CPU list ("3", "2,3", "0-3", "0,2-3") into rq's cpus; 0 if it is one, -1 if not. */
static int parse_cpus(const char *text, struct request *rq)
{
    CPU_ZERO(&rq->cpus);
    rq->cpu = -1;
    rq->cpu_count = 0;
    const char *p = text;
    while (*p) {
        char *end;
        errno = 0;
        long first = strtol(p, &end, 10), last;
        if (errno != 0 || end == p || first < 0 || first >= CPU_SETSIZE)
            return -1;
        last = first;
        p = end;
        if (*p == '-') {
            last = strtol(p + 1, &end, 10);
            if (errno != 0 || end == p + 1 || last < first || last >= CPU_SETSIZE)
                return -1;
            p = end;
        }
        for (long c = first; c <= last; c++)
            CPU_SET((int)c, &rq->cpus);
        if (*p == ',')
            p++;
        else if (*p)
            return -1;
    }
    rq->cpu_count = CPU_COUNT(&rq->cpus);
    if (rq->cpu_count == 0)
        return -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &rq->cpus)) {
            rq->cpu = c;
            break;
        }
    return 0;
}

/* clone3's arguments up to the cgroup field (CLONE_ARGS_SIZE_VER2), spelled out so that older kernel
 * headers build too. */
struct duet_clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls, set_tid, set_tid_size,
        cgroup;
};
#define DUET_CLONE_INTO_CGROUP 0x200000000ULL

/* Cgroups we wrote cgroup.kill to: on some kernels (seen on 6.18) a child cloned into a cgroup that was
 * ever killed is killed at birth, so those get fork() and cgroup.procs. */
#define MAX_KILLED 64
static char g_killed[MAX_KILLED][PATH_MAX];
static int g_nkilled = 0;

static int was_killed(const char *dir)
{
    for (int i = 0; i < g_nkilled; i++)
        if (strcmp(g_killed[i], dir) == 0)
            return 1;
    return 0;
}

/* The files read after every invocation (its cgroup's cpu.stat, cpu.pressure and cgroup.events, and
 * /proc/stat), kept open and read again from offset 0, which makes the kernel produce them anew (seq_file):
 * an open and a close fewer per file and invocation, on the slower side's way to its answer (issue 17). A
 * file that can no longer be read (its cgroup removed, and perhaps made again) is opened again. */
#define KEPT_FILES 8
static struct {
    char path[PATH_MAX];
    int fd;
} g_kept[KEPT_FILES];
static int g_nkept;

static ssize_t read_kept(const char *path, char *text, size_t size)
{
    int slot = -1;
    for (int i = 0; i < g_nkept; i++)
        if (strcmp(g_kept[i].path, path) == 0) {
            slot = i;
            break;
        }
    if (slot >= 0) {
        ssize_t n = pread(g_kept[slot].fd, text, size - 1, 0);
        if (n > 0)
            return n;
        close(g_kept[slot].fd);
        g_kept[slot] = g_kept[--g_nkept]; /* forgotten: opened afresh below */
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = pread(fd, text, size - 1, 0);
    if (n > 0 && g_nkept < KEPT_FILES) { /* (paths are made in PATH_MAX buffers: they fit) */
        snprintf(g_kept[g_nkept].path, PATH_MAX, "%s", path);
        g_kept[g_nkept++].fd = fd;
    } else {
        close(fd);
    }
    return n;
}

/* A small kernel file (cgroup, /proc) in one read, NUL-terminated: 0, or -1 if it cannot be read. */
static int read_text(const char *path, char *text, size_t size)
{
    ssize_t n = read_kept(path, text, size);
    if (n <= 0)
        return -1;
    text[n] = '\0';
    return 0;
}

/* 1 if processes are left in the cgroup, 0 if not, -1 if unknown. */
static int cgroup_populated(const char *dir)
{
    char path[PATH_MAX], text[256];
    snprintf(path, sizeof path, "%s/cgroup.events", dir);
    if (read_text(path, text, sizeof text) != 0)
        return -1;
    const char *p = strstr(text, "populated ");
    return p ? p[10] == '1' : -1;
}

/* The cgroup's CPU usage (usage_usec of cpu.stat), -1 if unknown. Read here, once the command and
 * what it left are reaped (~11 us), rather than by the orchestrator after both sides' results, where
 * the read (it flushes per-CPU statistics) was ~0.2 ms of a ~1.2 ms gap between pairs of 100 ms. */
static long long cgroup_usage_usec(const char *dir)
{
    char path[PATH_MAX], text[1024];
    snprintf(path, sizeof path, "%s/cpu.stat", dir);
    if (read_text(path, text, sizeof text) != 0)
        return -1;
    const char *line = text;
    while (strncmp(line, "usage_usec ", 11) != 0) {
        line = strchr(line, '\n');
        if (!line)
            return -1;
        line++;
    }
    char *end;
    errno = 0;
    long long usage = strtoll(line + 11, &end, 10);
    return errno == 0 && end != line + 11 && usage >= 0 ? usage : -1;
}

/* How long the cgroup's tasks were runnable but waiting for a CPU so far, in us: the "some" total of
 * its cpu.pressure (pressure stall information, Linux 4.20+ with PSI on), -1 if unknown. Sleeping or
 * waiting for I/O does not count, which is what wall minus CPU time cannot tell apart
 * (analyze/interference.py). Read here with cpu.stat, for the same reason. */
static long long cgroup_wait_usec(const char *dir)
{
    char path[PATH_MAX], text[256];
    snprintf(path, sizeof path, "%s/cpu.pressure", dir);
    if (read_text(path, text, sizeof text) != 0 || strncmp(text, "some ", 5) != 0)
        return -1;
    const char *total = strstr(text, " total=");
    const char *eol = strchr(text, '\n');
    if (!total || (eol && total > eol))
        return -1;
    char *end;
    errno = 0;
    long long wait = strtoll(total + 7, &end, 10);
    return errno == 0 && end != total + 7 && wait >= 0 ? wait : -1;
}

/* Steal time of `cpu` so far in clock ticks (the 8th value of its /proc/stat line), -1 if unknown. Read
 * here once the command is reaped, for the same reason as cgroup_usage_usec: a read by the orchestrator
 * after both results cost ~115 us of the gap between pairs. */
static long long steal_ticks(int cpu)
{
    if (cpu < 0)
        return -1;
    char text[16384], name[32];
    if (read_text("/proc/stat", text, sizeof text) != 0)
        return -1;
    int name_len = snprintf(name, sizeof name, "\ncpu%d ", cpu);
    const char *line = strstr(text, name);
    if (!line)
        return -1;
    const char *p = line + name_len;
    long long value = -1;
    for (int field = 1; field <= 8; field++) {
        char *end;
        errno = 0;
        value = strtoll(p, &end, 10);
        if (errno != 0 || end == p)
            return -1;
        p = end;
    }
    return value >= 0 ? value : -1;
}

/* Kill what is left in the cgroup, if anything is (the process group and our children are already
 * gone: this catches what escaped both). */
static void kill_cgroup(const char *dir)
{
    if (cgroup_populated(dir) == 0)
        return;
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/cgroup.kill", dir);
    write_file(path, "1");
    if (!was_killed(dir) && g_nkilled < MAX_KILLED)
        snprintf(g_killed[g_nkilled++], PATH_MAX, "%s", dir);
}

/* fork(), the child starting inside the cgroup open at cgroup_fd (clone3 with CLONE_INTO_CGROUP, Linux
 * 5.7+). Moving a running child there instead (a write to cgroup.procs) waits for an RCU grace period
 * under cgroup_threadgroup_rwsem: measured 10-15 ms per invocation on a 2-vCPU VM whose CPUs are busy
 * with CPU-bound commands, against ~0.5 ms without a cgroup. -1 with errno when it cannot be done, and
 * the caller falls back to fork() and cgroup.procs. The child only runs async-signal-safe code before
 * exec (as after fork; this process is single-threaded). */
static pid_t fork_into_cgroup(int cgroup_fd)
{
#ifdef SYS_clone3
    struct duet_clone_args args;
    memset(&args, 0, sizeof args);
    args.flags = DUET_CLONE_INTO_CGROUP;
    args.exit_signal = SIGCHLD;
    args.cgroup = (uint64_t)cgroup_fd;
    return (pid_t)syscall(SYS_clone3, &args, sizeof args);
#else
    (void)cgroup_fd;
    errno = ENOSYS;
    return -1;
#endif
}

/* Whether environment entries a and b ("NAME=VALUE") set the same name. */
static int same_name(const char *a, const char *b)
{
    size_t n = strcspn(a, "=");
    return strncmp(a, b, n) == 0 && b[n] == '=' && a[n] == '=';
}

/* The command's environment: ours, with the request's entries set on top (a later entry of the request
 * wins, as setenv would have it). Made here, before fork, so that the child only points `environ` at it:
 * setenv in the child wrote to copy-on-write heap pages, ~70 us of each invocation measured on a 2-vCPU
 * VM (issue 17), on the path from the release to the start stamp whenever the child had not been forked
 * before the release. NULL if the request sets nothing or memory is short (the child then uses setenv). */
static char **merged_environment(const struct request *rq)
{
    if (!rq->env || !rq->env[0])
        return NULL;
    size_t ours = 0, theirs = 0;
    while (environ && environ[ours])
        ours++;
    while (rq->env[theirs])
        theirs++;
    char **merged = malloc((ours + theirs + 1) * sizeof *merged);
    if (!merged)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < ours; i++) {
        int overridden = 0;
        for (size_t j = 0; j < theirs && !overridden; j++)
            overridden = same_name(rq->env[j], environ[i]);
        if (!overridden)
            merged[n++] = environ[i];
    }
    for (size_t j = 0; j < theirs; j++) {
        int later = 0;
        for (size_t k = j + 1; k < theirs && !later; k++)
            later = same_name(rq->env[k], rq->env[j]);
        if (!later && strchr(rq->env[j], '='))
            merged[n++] = rq->env[j];
    }
    merged[n] = NULL;
    return merged;
}

/* Launcher-side count of the parties ready to fork their child for a barrier page's pair (in the page's
 * padding, apart from the barrier's own fields: hooks never look at it). Zeroed with the page. */
#define READY_OFFSET 192

/* A queued pair's launchers meet before either forks its child: forked as soon as its own side's command
 * ended, a child would spin at the barrier while the partner's command still runs and while the partner's
 * launcher reaps and measures it — work on the idle CPU beside the later side, which slows it
 * (bench/beside.py: 2 ms of it took B/A 1.0469 to 1.0527), and on a host that runs both vCPUs on one core
 * at times, the spin took the partner's launcher 2-3x as long. So each launcher says it is ready and
 * sleeps on a futex until the other is too; the children then set up side by side and spin only for
 * the difference. Gives up at the halt, a signal or the timeout (the barrier, or the halt, then says
 * what happened). */
static void meet_partner(struct duet_shm *page, struct duet_shm *halt, long timeout_ms)
{
    uint32_t *ready = (uint32_t *)((char *)page + READY_OFFSET);
    __atomic_add_fetch(ready, 1, __ATOMIC_SEQ_CST);
    syscall(SYS_futex, ready, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
    int64_t since = duet_now_ns(), timeout_ns = duet_ms_to_ns(timeout_ms);
    for (;;) {
        uint32_t seen = __atomic_load_n(ready, __ATOMIC_ACQUIRE);
        if (seen >= DUET_LOAD(&page->parties) || (halt && DUET_LOAD(&halt->abort)) || DUET_LOAD(&page->abort) ||
            g_interrupted || g_cancelled)
            return;
        int64_t left = timeout_ns - (duet_now_ns() - since); /* no deadline: since + timeout may overflow */
        if (left <= 0)
            return;
        struct timespec ts = {(time_t)(left / 1000000000LL), (long)(left % 1000000000LL)};
        syscall(SYS_futex, ready, FUTEX_WAIT, seen, &ts, NULL, 0);
    }
}

/* The child's side of an invocation: everything that must happen after fork and before exec. With
 * go_fd >= 0 (a held request) it first waits for the gate's byte: "g" goes on, anything else ends it
 * unrun (MSG_SKIPPED). So the fork, the cgroup and the barrier's mapping are done before the release,
 * while the orchestrator still works between pairs: from the release to the start stamp then is a
 * wake-up, the redirections and the barrier (~0.1 ms), not also a clone3 (~0.24 ms in all measured on
 * a 2-vCPU VM). The redirections wait for the gate: until then the orchestrator may still be reading
 * the previous invocation's stderr from the same file. The child waits in its side's cgroup, so the
 * orchestrator sends a held request only once that side's previous invocation was answered: the
 * launcher that reaps it kills whatever is left in the cgroup. */
static void run_child(const struct request *rq, struct duet_shm *shm, int msg_fd, int redirect_stdin, int in_cgroup,
                      int go_fd, char **envp)
{
    setpgid(0, 0);
    struct child_msg m = {0};
    /* Our own signal dispositions must not reach the command (exec resets handlers, not ignores). */
    signal(SIGPIPE, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (go_fd >= 0) {
        char token = 0;
        ssize_t n;
        do
            n = read(go_fd, &token, 1);
        while (n < 0 && errno == EINTR);
        if (n != 1 || token != 'g') {
            m.kind = MSG_SKIPPED;
            (void)!write(msg_fd, &m, sizeof m);
            _exit(0);
        }
    }
    if (redirect_stdin || rq->stdin_path) {
        int in = open(rq->stdin_path ? rq->stdin_path : "/dev/null", O_RDONLY);
        if (in < 0 || dup2(in, 0) < 0)
            goto setup_failed;
        close(in);
    }
    if (rq->stdout_path) {
        int fd = open(rq->stdout_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 1) < 0)
            goto setup_failed;
        close(fd);
    }
    if (rq->stderr_path) {
        int fd = open(rq->stderr_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 2) < 0)
            goto setup_failed;
        close(fd);
    }
    if (rq->cwd && chdir(rq->cwd) != 0)
        goto setup_failed;
    if (envp)
        environ = envp; /* execvp then passes it, and looks the command up in its PATH */
    for (char **e = rq->env; !envp && e && *e; e++) {
        char *eq = strchr(*e, '=');
        if (eq) {
            *eq = '\0';
            int r = setenv(*e, eq + 1, 1);
            *eq = '=';
            if (r != 0)
                goto setup_failed;
        }
    }
    if (rq->cgroup_dir && !in_cgroup) {
        char path[PATH_MAX], pidtext[32];
        snprintf(path, sizeof path, "%s/cgroup.procs", rq->cgroup_dir);
        snprintf(pidtext, sizeof pidtext, "%d\n", (int)getpid());
        if (write_file(path, pidtext) != 0) {
            m.kind = MSG_CGROUP_FAILED;
            m.value = errno;
            if (shm)
                duet_set_abort(shm, DUET_ABORT_FAILED);
            (void)!write(msg_fd, &m, sizeof m);
            _exit(126);
        }
    }
    (void)sched_getcpu(); /* warm up, so that only the stamp itself follows the release */
    if (shm) {
        int r = duet_barrier_wait(shm, duet_ms_to_ns(rq->barrier_timeout_ms));
        if (r != DUET_RELEASED) {
            m.kind = MSG_BARRIER_FAILED;
            m.value = r;
            (void)!write(msg_fd, &m, sizeof m);
            _exit(125);
        }
    }
    m.start_ns = duet_now_ns();
    struct timespec cpu_ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_ts);
    m.pre_exec_cpu_ns = (int64_t)cpu_ts.tv_sec * 1000000000LL + cpu_ts.tv_nsec;
    m.kind = MSG_STARTED;
    m.cpu = sched_getcpu();
    (void)!write(msg_fd, &m, sizeof m);
    execvp(rq->cmd[0], rq->cmd);
    m.kind = MSG_EXEC_FAILED;
    m.value = errno;
    (void)!write(msg_fd, &m, sizeof m);
    _exit(127);

setup_failed:
    m.kind = MSG_SETUP_FAILED;
    m.value = errno;
    /* A partner waiting at the barrier must not wait for a side that will never come. */
    if (shm)
        duet_set_abort(shm, DUET_ABORT_FAILED);
    (void)!write(msg_fd, &m, sizeof m);
    _exit(126);
}

/* Run one invocation and return its result as a malloc'd JSON object (no trailing newline). */
static char *run_invocation(const struct request *rq, int redirect_stdin, int go_fd)
{
    char *json = NULL;
    size_t json_len = 0;
    FILE *out = open_memstream(&json, &json_len);
    if (!out)
        return NULL;

    struct duet_shm *shm = NULL, *halt = NULL;
    if (rq->barrier_path) {
        /* the halt page first: the mapping is the same, and shm must come from the last call */
        halt = rq->halt_slot >= 0 ? map_barrier(rq->barrier_path, rq->halt_slot) : NULL;
        shm = map_barrier(rq->barrier_path, rq->barrier_slot);
        if (!shm || (rq->halt_slot >= 0 && !halt)) {
            fprintf(out, "{\"status\":\"launch_error\",\"error\":");
            json_escape(out, "cannot map barrier file");
            fprintf(out, ",\"cpu_requested\":%d}", rq->cpu);
            fclose(out);
            return json;
        }
    }

    /* Pinned again for every invocation, even to the CPUs it is already pinned to: a command that moves
     * its launcher (`taskset -p -c 0 $PPID`, sched_setaffinity on its parent) would otherwise move every
     * later invocation of its side, which the child inherits from us, onto another CPU, perhaps its
     * partner's. One system call: 0.37-0.44 us on a 2-vCPU VM (200000 calls to the same CPU). */
    const char *pin_error = NULL;
    if (rq->cpu == -2)
        pin_error = "its CPU list cannot be read";
    else if (rq->cpu >= 0 && sched_setaffinity(0, sizeof rq->cpus, &rq->cpus) != 0)
        pin_error = strerror(errno);

    g_timed_out = 0;
    const char *status = "ok";
    char error[512] = "";
    struct child_msg started = {0}, msg;
    int64_t end_ns = 0;
    int wstatus = 0;
    struct rusage ru_main;
    memset(&ru_main, 0, sizeof ru_main);

    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        status = "launch_error";
        snprintf(error, sizeof error, "pipe failed: %s", strerror(errno));
        if (shm)
            duet_set_abort(shm, DUET_ABORT_FAILED);
        pipefd[0] = pipefd[1] = -1;
        pin_error = pin_error ? pin_error : "";
    }
    if (pin_error && shm)
        duet_set_abort(shm, DUET_ABORT_FAILED);

    /* Stopped before the command started (a filler no longer needed, say): do not start it at all. */
    int stopped = g_interrupted || g_cancelled;
    if (!stopped && rq->meet && shm) {
        meet_partner(shm, halt, rq->barrier_timeout_ms);
        stopped = g_interrupted || g_cancelled;
    }
    /* A queued pair after one that failed: not run. Its page is aborted, so that a partner's child
     * already waiting there ends instead of waiting for ours. */
    int halted = !stopped && halt && DUET_LOAD(&halt->abort) != 0;
    if (halted) {
        duet_set_abort(shm, DUET_ABORT_FAILED);
        stopped = 1;
    }
    pid_t child = -1;
    int in_cgroup = 0;
    char **envp = NULL;
    if (!pin_error && !stopped) {
        envp = merged_environment(rq);
        int cgroup_fd = rq->cgroup_dir && !was_killed(rq->cgroup_dir) && g_nkilled < MAX_KILLED
                            ? open(rq->cgroup_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
        if (cgroup_fd >= 0) {
            child = fork_into_cgroup(cgroup_fd);
            in_cgroup = child >= 0;
            close(cgroup_fd);
        }
        if (child < 0)
            child = fork();
    }
    if (child == 0) {
        close(pipefd[0]);
        run_child(rq, shm, pipefd[1], redirect_stdin, in_cgroup, go_fd, envp);
    }
    free(envp); /* the child has its own copy */
    if (pipefd[1] >= 0)
        close(pipefd[1]);
    g_child = child;
    if (g_interrupted || g_cancelled)
        kill_child(); /* the signal came between fork and the line above, when the handler had no child */

    if (pipefd[0] < 0) {
        /* status and error already say why */
    } else if (stopped && !pin_error) {
        status = halted ? "skipped" : "interrupted";
    } else if (pin_error) {
        status = "launch_error";
        if (rq->cpu_count > 1)
            snprintf(error, sizeof error, "cannot pin to %d CPUs from CPU %d: %s", rq->cpu_count, rq->cpu, pin_error);
        else
            snprintf(error, sizeof error, "cannot pin to CPU %d: %s", rq->cpu, pin_error);
    } else if (child < 0) {
        status = "launch_error";
        snprintf(error, sizeof error, "fork failed: %s", strerror(errno));
        if (shm)
            duet_set_abort(shm, DUET_ABORT_FAILED);
    } else {
        ssize_t n;
        do
            n = read(pipefd[0], &started, sizeof started);
        while (n < 0 && errno == EINTR && !g_interrupted && !g_cancelled);
        if (n == (ssize_t)sizeof started && started.kind == MSG_STARTED && rq->timeout_ms > 0) {
            struct itimerval it = {{0, 0}, {rq->timeout_ms / 1000, (rq->timeout_ms % 1000) * 1000}};
            setitimer(ITIMER_REAL, &it, NULL);
        }
        if (n == (ssize_t)sizeof started && started.kind == MSG_STARTED) {
            do
                n = read(pipefd[0], &msg, sizeof msg);
            while (n < 0 && errno == EINTR && !g_interrupted && !g_cancelled && !g_timed_out);
            if (n == (ssize_t)sizeof msg && msg.kind == MSG_EXEC_FAILED) {
                status = "exec_failed";
                snprintf(error, sizeof error, "cannot execute %s: %s", rq->cmd[0], strerror(msg.value));
            }
        } else if (n == (ssize_t)sizeof started && started.kind == MSG_BARRIER_FAILED) {
            status = started.value == DUET_TIMED_OUT ? "barrier_timeout" : "barrier_aborted";
            snprintf(error, sizeof error, "%s",
                     started.value == DUET_TIMED_OUT ? "the other side did not reach the start barrier in time"
                     : started.value == DUET_BAD_PAGE ? "the barrier file is not a duet barrier page"
                                                      : "the other side failed before the start barrier");
        } else if (n == (ssize_t)sizeof started && started.kind == MSG_CGROUP_FAILED) {
            status = "launch_error";
            snprintf(error, sizeof error, "cannot join cgroup %s: %s", rq->cgroup_dir, strerror(started.value));
        } else if (n == (ssize_t)sizeof started && started.kind == MSG_SKIPPED) {
            status = "skipped";
        } else if (n == (ssize_t)sizeof started && started.kind == MSG_SETUP_FAILED) {
            status = "launch_error";
            snprintf(error, sizeof error, "cannot set up the command's output, directory or environment: %s",
                     strerror(started.value));
        } else if (g_interrupted || g_cancelled) {
            status = "interrupted";
        } else {
            status = "launch_error";
            snprintf(error, sizeof error, "the launcher's child vanished before starting");
        }
        pid_t w;
        do
            w = wait4(child, &wstatus, 0, &ru_main);
        while (w < 0 && errno == EINTR);
        end_ns = duet_now_ns();
        /* The command is gone: a partner whose harness hooks still wait at the barrier for another
         * iteration must not wait for us (abort code 4; a reason set earlier stays). */
        if (shm)
            duet_set_abort(shm, DUET_ABORT_EXITED);
        struct itimerval off = {{0, 0}, {0, 0}};
        setitimer(ITIMER_REAL, &off, NULL);
    }
    if (pipefd[0] >= 0)
        close(pipefd[0]);

    /* What the command left behind: kill its group, its cgroup and our remaining children, then reap
     * everything so that their CPU time is counted and nothing outlives the invocation. */
    int orphans = 0;
    struct rusage ru_orphans;
    memset(&ru_orphans, 0, sizeof ru_orphans);
    if (child > 0) {
        kill(-child, SIGKILL);
        g_child = -1; /* from here a late cancel must not hit a recycled pid */
        /* Most commands leave nothing: when no child is left at all (ECHILD at once), the scan of
         * /proc/self/task/PID/children is skipped (~30-60 us of the slower side's gap on a 2-vCPU VM). */
        int st;
        struct rusage ru;
        pid_t w;
        do
            w = wait4(-1, &st, WNOHANG, &ru);
        while (w < 0 && errno == EINTR);
        int left = w >= 0;
        if (w > 0)
            add_orphan(&ru_orphans, &ru, &orphans);
        while (left) {
            kill_remaining_children();
            w = wait4(-1, &st, 0, &ru);
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                break;
            }
            add_orphan(&ru_orphans, &ru, &orphans);
        }
        if (rq->cgroup_dir)
            kill_cgroup(rq->cgroup_dir);
    }
    long long cgroup_usage = rq->cgroup_dir ? cgroup_usage_usec(rq->cgroup_dir) : -1;
    long long cgroup_wait = rq->cgroup_dir ? cgroup_wait_usec(rq->cgroup_dir) : -1;
    /* one CPU's steal only: the orchestrator reads a set's itself (execute/runner.py _StealReadings) */
    long long steal = rq->cpu_count == 1 ? steal_ticks(rq->cpu) : -1;
    /* How much the command wrote to its stderr file: most write nothing, and the orchestrator then does
     * not open the file between pairs to look for a tail to show (-1: no file, or unknown). */
    long long stderr_bytes = -1;
    struct stat stderr_stat;
    if (rq->stderr_path && child > 0 && stat(rq->stderr_path, &stderr_stat) == 0)
        stderr_bytes = (long long)stderr_stat.st_size;

    int exit_code = -1, term_signal = 0;
    if (strcmp(status, "ok") == 0 && child > 0) {
        if (g_timed_out)
            status = "timeout";
        else if (g_interrupted || g_cancelled)
            status = "interrupted";
        else if (WIFSIGNALED(wstatus)) {
            status = "signaled";
            term_signal = WTERMSIG(wstatus);
        } else if (WIFEXITED(wstatus)) {
            exit_code = WEXITSTATUS(wstatus);
            if (exit_code != 0)
                status = "failed";
        }
    }

    /* A failure halts the pairs queued after this one (the orchestrator stops at a failed pair); a non-zero
     * exit or a signal only with halt_failed (--ignore-failure times both, as hyperfine does). */
    int timed_anyway = strcmp(status, "failed") == 0 || strcmp(status, "signaled") == 0;
    if (halt && strcmp(status, "ok") != 0 && strcmp(status, "skipped") != 0 && !(timed_anyway && !rq->halt_failed))
        duet_set_abort(halt, DUET_ABORT_FAILED);

    long long utime_us = (long long)ru_main.ru_utime.tv_sec * 1000000 + ru_main.ru_utime.tv_usec +
                         (long long)ru_orphans.ru_utime.tv_sec * 1000000 + ru_orphans.ru_utime.tv_usec;
    long long stime_us = (long long)ru_main.ru_stime.tv_sec * 1000000 + ru_main.ru_stime.tv_usec +
                         (long long)ru_orphans.ru_stime.tv_sec * 1000000 + ru_orphans.ru_stime.tv_usec;
    long maxrss = ru_main.ru_maxrss > ru_orphans.ru_maxrss ? ru_main.ru_maxrss : ru_orphans.ru_maxrss;

    fprintf(out, "{\"status\":\"%s\",\"exit_code\":%d,\"signal\":%d,\"start_ns\":%lld,\"end_ns\":%lld,"
                 "\"utime_us\":%lld,\"stime_us\":%lld,\"maxrss_kb\":%ld,\"nvcsw\":%ld,\"nivcsw\":%ld,"
                 "\"minflt\":%ld,\"majflt\":%ld,\"cpu_seen\":%d,\"cpu_requested\":%d,\"orphans_reaped\":%d,"
                 "\"launcher_pid\":%d,\"pre_exec_cpu_ns\":%lld,\"cgroup_usage_usec\":%lld,\"cgroup_wait_usec\":%lld,\"steal_ticks\":%lld,"
                 "\"stderr_bytes\":%lld,"
                 "\"error\":",
            status, exit_code, term_signal, (long long)started.start_ns, (long long)end_ns, utime_us, stime_us,
            maxrss, ru_main.ru_nvcsw + ru_orphans.ru_nvcsw, ru_main.ru_nivcsw + ru_orphans.ru_nivcsw,
            ru_main.ru_minflt + ru_orphans.ru_minflt, ru_main.ru_majflt + ru_orphans.ru_majflt,
            started.kind == MSG_STARTED ? started.cpu : -1, rq->cpu, orphans, (int)getpid(),
            (long long)(started.kind == MSG_STARTED ? started.pre_exec_cpu_ns : 0), cgroup_usage, cgroup_wait,
            steal, stderr_bytes);
    json_escape(out, error);
    fprintf(out, "}");
    fclose(out);
    return json;
}

static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_terminate; /* no SA_RESTART: wait4 and read return EINTR and we clean up */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    sa.sa_handler = on_cancel;
    sigaction(SIGUSR1, &sa, NULL);
}

/* If the orchestrator is killed (even with SIGKILL), stop the command instead of leaving it running.
 * `orchestrator` is its pid as it gave it (--parent): one killed before this runs has already left us
 * to a reaper, whose pid getppid() then gives, so reading the parent here could not tell (a campaign's
 * duet killed just after starting its launchers left both sides' harnesses running). Without --parent,
 * the parent as first read here. */
static void follow_orchestrator(pid_t orchestrator)
{
    if (orchestrator <= 0)
        orchestrator = getppid();
    prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
    if (getppid() != orchestrator)
        raise(SIGTERM);
}

/* Read exactly len bytes; 0 on success, -1 on EOF, error or interruption. */
static int read_exact(int fd, char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = read(fd, buf, len);
        if (n < 0 && errno == EINTR && !g_interrupted)
            continue;
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

#define MAX_REQUEST (16 << 20)

static int parse_request(char *payload, size_t len, struct request *rq, char ***argv_store, char ***env_store,
                         int *hold)
{
    *hold = 0;
    memset(rq, 0, sizeof *rq);
    rq->cpu = -1;
    rq->halt_slot = -1;
    rq->barrier_timeout_ms = 60000;
    size_t nargs = 0, nenv = 0;
    for (size_t i = 0; i < len; i++)
        if (payload[i] == '\0')
            nargs++; /* an upper bound for both lists */
    char **args = calloc(nargs + 1, sizeof *args);
    char **env = calloc(nargs + 1, sizeof *env);
    if (!args || !env) {
        free(args);
        free(env);
        return -1;
    }
    nargs = 0;
    for (size_t i = 0; i < len;) {
        char *entry = payload + i;
        size_t elen = strnlen(entry, len - i);
        if (i + elen >= len) /* not NUL-terminated */
            break;
        i += elen + 1;
        char *eq = strchr(entry, '=');
        if (!eq)
            continue;
        *eq = '\0';
        char *value = eq + 1;
        if (strcmp(entry, "arg") == 0)
            args[nargs++] = value;
        else if (strcmp(entry, "env") == 0)
            env[nenv++] = value;
        else if (strcmp(entry, "cpu") == 0) {
            if (parse_cpus(value, rq) != 0)
                rq->cpu = -2; /* answered as a launch error: see run_request */
        }
        else if (strcmp(entry, "barrier") == 0)
            rq->barrier_path = value;
        else if (strcmp(entry, "barrier_slot") == 0)
            rq->barrier_slot = atol(value);
        else if (strcmp(entry, "halt_slot") == 0)
            rq->halt_slot = atol(value);
        else if (strcmp(entry, "meet") == 0)
            rq->meet = atoi(value);
        else if (strcmp(entry, "halt_failed") == 0)
            rq->halt_failed = atoi(value);
        else if (strcmp(entry, "notify") == 0)
            rq->notify = atoi(value);
        else if (strcmp(entry, "journal") == 0)
            rq->journal = value;
        else if (strcmp(entry, "barrier_timeout_ms") == 0)
            rq->barrier_timeout_ms = atol(value);
        else if (strcmp(entry, "timeout_ms") == 0)
            rq->timeout_ms = atol(value);
        else if (strcmp(entry, "cgroup") == 0)
            rq->cgroup_dir = value;
        else if (strcmp(entry, "stdin") == 0)
            rq->stdin_path = value;
        else if (strcmp(entry, "stdout") == 0)
            rq->stdout_path = value;
        else if (strcmp(entry, "stderr") == 0)
            rq->stderr_path = value;
        else if (strcmp(entry, "cwd") == 0)
            rq->cwd = value;
        else if (strcmp(entry, "hold") == 0)
            *hold = atoi(value);
    }
    rq->cmd = args;
    rq->env = env;
    *argv_store = args;
    *env_store = env;
    return nargs > 0 ? 0 : -1;
}

/* Append an answer line to the journal at path (kept open while the path stays the same): the
 * orchestrator reads answers only once a queued batch ended, and a kill -9 of it would lose those in the
 * pipe; the next duet command stores what the journal holds (execute/journal.py). */
static void journal_answer(const char *path, const char *json)
{
    static int fd = -1;
    static char open_path[PATH_MAX] = "";
    if (fd < 0 || strcmp(open_path, path) != 0) {
        if (fd >= 0)
            close(fd);
        fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
        snprintf(open_path, sizeof open_path, "%s", fd >= 0 ? path : "");
        if (fd < 0)
            return;
    }
    struct iovec line[2] = {{(void *)json, strlen(json)}, {"\n", 1}};
    (void)!writev(fd, line, 2);
}

/* Serve requests from stdin, answering each on result_fd. A request marked notify also writes a byte to
 * done_fd once answered: the orchestrator sleeps on that pipe, not on the answers, while a queued batch
 * runs, so it is not woken beside the measured commands after every answer. */
static int serve(int result_fd, int go_fd, int done_fd)
{
    fcntl(result_fd, F_SETFD, FD_CLOEXEC);
    if (go_fd >= 0)
        fcntl(go_fd, F_SETFD, FD_CLOEXEC);
    if (done_fd >= 0)
        fcntl(done_fd, F_SETFD, FD_CLOEXEC);
    signal(SIGPIPE, SIG_IGN); /* a vanished orchestrator shows as EPIPE on result_fd: then we end */
    for (;;) {
        char header[9];
        if (read_exact(0, header, sizeof header) != 0 || header[8] != '\n')
            return 0;
        header[8] = '\0';
        char *end;
        unsigned long len = strtoul(header, &end, 16);
        if (*end != '\0' || len == 0 || len > MAX_REQUEST) {
            fprintf(stderr, "duet-launch: malformed request header\n");
            return 2;
        }
        char *payload = malloc(len);
        if (!payload || read_exact(0, payload, len) != 0) {
            free(payload);
            return 0;
        }
        /* A cancel belongs to the invocation it was sent for: the orchestrator reads that invocation's
         * answer before it sends the next request, and a pending signal runs before read() returns. */
        g_cancelled = 0;
        struct request rq;
        char **args = NULL, **env = NULL;
        char *json;
        int hold = 0;
        if (parse_request(payload, len, &rq, &args, &env, &hold) != 0) {
            json = strdup("{\"status\":\"launch_error\",\"error\":\"request without a command\"}");
        } else {
            json = run_invocation(&rq, 1, hold ? go_fd : -1);
        }
        if (json && rq.journal)
            journal_answer(rq.journal, json);
        int failed = !json || write_all(result_fd, json, strlen(json)) != 0 || write_all(result_fd, "\n", 1) != 0;
        if (!failed && rq.notify && done_fd >= 0)
            failed = write_all(done_fd, "d", 1) != 0;
        free(json);
        free(args);
        free(env);
        free(payload);
        if (failed || g_interrupted)
            return 0;
    }
}

int main(int argc, char **argv)
{
    struct request rq;
    memset(&rq, 0, sizeof rq);
    rq.cpu = -1;
    rq.halt_slot = -1;
    rq.barrier_timeout_ms = 60000;
    const char *result_path = NULL;
    int serve_fd = -1, go_fd = -1, done_fd = -1;
    pid_t parent = 0;
    int i = 1;
    for (; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) {
            i++;
            break;
        }
        if (i + 1 >= argc)
            usage_error("option without a value");
        if (strcmp(argv[i], "--result") == 0)
            result_path = argv[++i];
        else if (strcmp(argv[i], "--serve") == 0)
            serve_fd = atoi(argv[++i]);
        else if (strcmp(argv[i], "--go") == 0)
            go_fd = atoi(argv[++i]);
        else if (strcmp(argv[i], "--parent") == 0)
            parent = (pid_t)atol(argv[++i]);
        else if (strcmp(argv[i], "--done") == 0)
            done_fd = atoi(argv[++i]);
        else if (strcmp(argv[i], "--cpu") == 0) {
            if (parse_cpus(argv[++i], &rq) != 0)
                usage_error("--cpu takes a CPU list such as 3, 2,3 or 0-3");
        }
        else if (strcmp(argv[i], "--barrier") == 0)
            rq.barrier_path = argv[++i];
        else if (strcmp(argv[i], "--barrier-timeout-ms") == 0)
            rq.barrier_timeout_ms = atol(argv[++i]);
        else if (strcmp(argv[i], "--timeout-ms") == 0)
            rq.timeout_ms = atol(argv[++i]);
        else if (strcmp(argv[i], "--cgroup") == 0)
            rq.cgroup_dir = argv[++i];
        else
            usage_error("unknown option");
    }

    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    install_handlers();
    follow_orchestrator(parent);

    if (serve_fd >= 0) {
        if (serve_fd <= 2 || fcntl(serve_fd, F_GETFD) < 0)
            usage_error("--serve needs an open file descriptor above 2");
        if (go_fd >= 0 && (go_fd <= 2 || fcntl(go_fd, F_GETFD) < 0))
            usage_error("--go needs an open file descriptor above 2");
        if (done_fd >= 0 && (done_fd <= 2 || fcntl(done_fd, F_GETFD) < 0))
            usage_error("--done needs an open file descriptor above 2");
        return serve(serve_fd, go_fd, done_fd);
    }

    if (!result_path)
        usage_error("--result is required");
    if (i >= argc)
        usage_error("no program given after --");
    rq.cmd = &argv[i];

    FILE *out = fopen(result_path, "we");
    if (!out) {
        fprintf(stderr, "duet-launch: cannot write %s: %s\n", result_path, strerror(errno));
        return 2;
    }
    char *json = run_invocation(&rq, 0, -1);
    if (!json) {
        fclose(out);
        return 3;
    }
    fprintf(out, "%s\n", json);
    fclose(out);
    int ok = strncmp(json, "{\"status\":\"ok\"", 14) == 0;
    int mapfail = strstr(json, "cannot map barrier file") != NULL;
    free(json);
    return ok ? 0 : (mapfail ? 3 : 1);
}
