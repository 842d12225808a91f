/*
 * duet-launch: run one invocation of a command and measure it, the way Python cannot.
 *
 *   duet-launch --result FILE [--cpu N] [--barrier PATH] [--barrier-timeout-ms MS]
 *               [--timeout-ms MS] [--cgroup DIR] -- PROGRAM [ARGS...]
 *
 * Why native (notes/machine_probe.md):
 *  - a child forked from Python inherits Python's RSS high-water mark into ru_maxrss; forked from this
 *    small process it does not;
 *  - two processes launched from Python start 0.1-1.6 ms apart; here each side is pinned, prepared and
 *    then held at a shared-memory spin barrier *after* exec of the launcher, so both are released
 *    within about a microsecond and exec the command right away;
 *  - as a child subreaper it also collects the CPU time of daemonized grandchildren, which wait4 on the
 *    direct child alone would miss.
 *
 * Flow: pin self -> subreaper -> fork. Child: own process group, join the cgroup, wait at the barrier,
 * stamp CLOCK_MONOTONIC, report the stamp through a close-on-exec pipe, exec. Parent: sleeps in read()
 * and wait4() (it never polls), enforces the timeout with a timer, kills what the command left behind,
 * reaps it, and writes one JSON object to the result file.
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
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "duet_barrier.h"

enum msg_kind { MSG_STARTED = 1, MSG_EXEC_FAILED = 2, MSG_BARRIER_FAILED = 3, MSG_CGROUP_FAILED = 4 };

struct child_msg {
    int32_t kind;
    int32_t value; /* errno or barrier result */
    int64_t start_ns;
    int64_t pre_exec_cpu_ns; /* CPU the child spent before exec (mostly spinning at the barrier) */
    int32_t cpu;
};

static volatile sig_atomic_t g_timed_out = 0;
static volatile sig_atomic_t g_interrupted = 0;
static pid_t g_child = -1;

/* Kill the command: its process group, and the child itself in case it has not set up its group yet. */
static void kill_child(void)
{
    if (g_child > 0) {
        kill(-g_child, SIGKILL);
        kill(g_child, SIGKILL);
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

static void usage_error(const char *msg)
{
    fprintf(stderr, "duet-launch: %s\nusage: duet-launch --result FILE [--cpu N] [--barrier PATH] "
                    "[--barrier-timeout-ms MS] [--timeout-ms MS] [--cgroup DIR] -- PROGRAM [ARGS...]\n",
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

int main(int argc, char **argv)
{
    const char *result_path = NULL, *barrier_path = NULL, *cgroup_dir = NULL;
    int cpu = -1;
    long barrier_timeout_ms = 60000, timeout_ms = 0;
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
        else if (strcmp(argv[i], "--cpu") == 0)
            cpu = atoi(argv[++i]);
        else if (strcmp(argv[i], "--barrier") == 0)
            barrier_path = argv[++i];
        else if (strcmp(argv[i], "--barrier-timeout-ms") == 0)
            barrier_timeout_ms = atol(argv[++i]);
        else if (strcmp(argv[i], "--timeout-ms") == 0)
            timeout_ms = atol(argv[++i]);
        else if (strcmp(argv[i], "--cgroup") == 0)
            cgroup_dir = argv[++i];
        else
            usage_error("unknown option");
    }
    if (!result_path)
        usage_error("--result is required");
    if (i >= argc)
        usage_error("no program given after --");
    char **cmd = &argv[i];

    FILE *out = fopen(result_path, "we");
    if (!out) {
        fprintf(stderr, "duet-launch: cannot write %s: %s\n", result_path, strerror(errno));
        return 2;
    }

    struct duet_shm *shm = NULL;
    if (barrier_path) {
        int fd = open(barrier_path, O_RDWR | O_CLOEXEC);
        if (fd >= 0) {
            void *p = mmap(NULL, DUET_SHM_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            close(fd);
            if (p != MAP_FAILED)
                shm = p;
        }
        if (!shm) {
            fprintf(out, "{\"status\":\"launch_error\",\"error\":");
            json_escape(out, "cannot map barrier file");
            fprintf(out, "}\n");
            fclose(out);
            return 3;
        }
    }

    const char *pin_error = NULL;
    if (cpu >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) != 0)
            pin_error = strerror(errno);
    }
    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
    /* If the orchestrator is killed (even with SIGKILL), stop the command instead of leaving it running. */
    pid_t orchestrator = getppid();
    prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0);
    if (getppid() != orchestrator)
        raise(SIGTERM);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_terminate; /* no SA_RESTART: wait4 returns EINTR and we clean up */
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);

    int pipefd[2];
    if (pipe2(pipefd, O_CLOEXEC) != 0) {
        perror("duet-launch: pipe");
        return 3;
    }

    if (pin_error && shm)
        duet_set_abort(shm, DUET_ABORT_FAILED);

    /* Stopped before the command started (a filler no longer needed, say): do not start it at all. */
    pid_t child = (pin_error || g_interrupted) ? -1 : fork();
    if (child == 0) {
        close(pipefd[0]);
        setpgid(0, 0);
        struct child_msg m = {0};
        if (cgroup_dir) {
            char path[PATH_MAX], pidtext[32];
            snprintf(path, sizeof path, "%s/cgroup.procs", cgroup_dir);
            snprintf(pidtext, sizeof pidtext, "%d\n", (int)getpid());
            if (write_file(path, pidtext) != 0) {
                m.kind = MSG_CGROUP_FAILED;
                m.value = errno;
                if (shm)
                    duet_set_abort(shm, DUET_ABORT_FAILED);
                (void)!write(pipefd[1], &m, sizeof m);
                _exit(126);
            }
        }
        (void)sched_getcpu(); /* warm up, so that only the stamp itself follows the release */
        if (shm) {
            int r = duet_barrier_wait(shm, (int64_t)barrier_timeout_ms * 1000000LL);
            if (r != DUET_RELEASED) {
                m.kind = MSG_BARRIER_FAILED;
                m.value = r;
                (void)!write(pipefd[1], &m, sizeof m);
                _exit(125);
            }
        }
        m.start_ns = duet_now_ns();
        struct timespec cpu_ts;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu_ts);
        m.pre_exec_cpu_ns = (int64_t)cpu_ts.tv_sec * 1000000000LL + cpu_ts.tv_nsec;
        m.kind = MSG_STARTED;
        m.cpu = sched_getcpu();
        (void)!write(pipefd[1], &m, sizeof m);
        execvp(cmd[0], cmd);
        m.kind = MSG_EXEC_FAILED;
        m.value = errno;
        (void)!write(pipefd[1], &m, sizeof m);
        _exit(127);
    }
    close(pipefd[1]);
    g_child = child;
    if (g_interrupted)
        kill_child(); /* the signal came between fork and the line above, when the handler had no child */

    const char *status = "ok";
    char error[512] = "";
    struct child_msg started = {0}, msg;
    int64_t end_ns = 0;
    int wstatus = 0;
    struct rusage ru_main;
    memset(&ru_main, 0, sizeof ru_main);

    if (g_interrupted && child < 0 && !pin_error) {
        status = "interrupted";
    } else if (pin_error) {
        status = "launch_error";
        snprintf(error, sizeof error, "cannot pin to CPU %d: %s", cpu, pin_error);
    } else if (child < 0) {
        status = "launch_error";
        snprintf(error, sizeof error, "fork failed: %s", strerror(errno));
        if (shm)
            duet_set_abort(shm, DUET_ABORT_FAILED);
    } else {
        ssize_t n;
        do
            n = read(pipefd[0], &started, sizeof started);
        while (n < 0 && errno == EINTR && !g_interrupted);
        if (n == (ssize_t)sizeof started && started.kind == MSG_STARTED && timeout_ms > 0) {
            struct itimerval it = {{0, 0}, {timeout_ms / 1000, (timeout_ms % 1000) * 1000}};
            setitimer(ITIMER_REAL, &it, NULL);
        }
        if (n == (ssize_t)sizeof started && started.kind == MSG_STARTED) {
            do
                n = read(pipefd[0], &msg, sizeof msg);
            while (n < 0 && errno == EINTR && !g_interrupted && !g_timed_out);
            if (n == (ssize_t)sizeof msg && msg.kind == MSG_EXEC_FAILED) {
                status = "exec_failed";
                snprintf(error, sizeof error, "cannot execute %s: %s", cmd[0], strerror(msg.value));
            }
        } else if (n == (ssize_t)sizeof started && started.kind == MSG_BARRIER_FAILED) {
            status = started.value == DUET_TIMED_OUT ? "barrier_timeout" : "barrier_aborted";
            snprintf(error, sizeof error, "%s",
                     started.value == DUET_TIMED_OUT ? "the other side did not reach the start barrier in time"
                     : started.value == DUET_BAD_PAGE ? "the barrier file is not a duet barrier page"
                                                      : "the other side failed before the start barrier");
        } else if (n == (ssize_t)sizeof started && started.kind == MSG_CGROUP_FAILED) {
            status = "launch_error";
            snprintf(error, sizeof error, "cannot join cgroup %s: %s", cgroup_dir, strerror(started.value));
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
    close(pipefd[0]);

    /* What the command left behind: kill its group, its cgroup and our remaining children, then reap
     * everything so that their CPU time is counted and nothing outlives the invocation. */
    int orphans = 0;
    struct rusage ru_orphans;
    memset(&ru_orphans, 0, sizeof ru_orphans);
    if (child > 0) {
        kill(-child, SIGKILL);
        if (cgroup_dir) {
            char path[PATH_MAX];
            snprintf(path, sizeof path, "%s/cgroup.kill", cgroup_dir);
            write_file(path, "1");
        }
        for (;;) {
            kill_remaining_children();
            int st;
            struct rusage ru;
            pid_t w = wait4(-1, &st, 0, &ru);
            if (w < 0) {
                if (errno == EINTR)
                    continue;
                break;
            }
            orphans++;
            timeradd(&ru_orphans.ru_utime, &ru.ru_utime, &ru_orphans.ru_utime);
            timeradd(&ru_orphans.ru_stime, &ru.ru_stime, &ru_orphans.ru_stime);
            if (ru.ru_maxrss > ru_orphans.ru_maxrss)
                ru_orphans.ru_maxrss = ru.ru_maxrss;
            ru_orphans.ru_nvcsw += ru.ru_nvcsw;
            ru_orphans.ru_nivcsw += ru.ru_nivcsw;
            ru_orphans.ru_minflt += ru.ru_minflt;
            ru_orphans.ru_majflt += ru.ru_majflt;
        }
    }

    int exit_code = -1, term_signal = 0;
    if (strcmp(status, "ok") == 0 && child > 0) {
        if (g_timed_out)
            status = "timeout";
        else if (g_interrupted)
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

    long long utime_us = (long long)ru_main.ru_utime.tv_sec * 1000000 + ru_main.ru_utime.tv_usec +
                         (long long)ru_orphans.ru_utime.tv_sec * 1000000 + ru_orphans.ru_utime.tv_usec;
    long long stime_us = (long long)ru_main.ru_stime.tv_sec * 1000000 + ru_main.ru_stime.tv_usec +
                         (long long)ru_orphans.ru_stime.tv_sec * 1000000 + ru_orphans.ru_stime.tv_usec;
    long maxrss = ru_main.ru_maxrss > ru_orphans.ru_maxrss ? ru_main.ru_maxrss : ru_orphans.ru_maxrss;

    fprintf(out, "{\"status\":\"%s\",\"exit_code\":%d,\"signal\":%d,\"start_ns\":%lld,\"end_ns\":%lld,"
                 "\"utime_us\":%lld,\"stime_us\":%lld,\"maxrss_kb\":%ld,\"nvcsw\":%ld,\"nivcsw\":%ld,"
                 "\"minflt\":%ld,\"majflt\":%ld,\"cpu_seen\":%d,\"cpu_requested\":%d,\"orphans_reaped\":%d,"
                 "\"launcher_pid\":%d,\"pre_exec_cpu_ns\":%lld,\"error\":",
            status, exit_code, term_signal, (long long)started.start_ns, (long long)end_ns, utime_us, stime_us,
            maxrss, ru_main.ru_nvcsw + ru_orphans.ru_nvcsw, ru_main.ru_nivcsw + ru_orphans.ru_nivcsw,
            ru_main.ru_minflt + ru_orphans.ru_minflt, ru_main.ru_majflt + ru_orphans.ru_majflt,
            started.kind == MSG_STARTED ? started.cpu : -1, cpu, orphans, (int)getpid(),
            (long long)(started.kind == MSG_STARTED ? started.pre_exec_cpu_ns : 0));
    json_escape(out, error);
    fprintf(out, "}\n");
    fclose(out);
    return strcmp(status, "ok") == 0 ? 0 : 1;
}
