/*
 * A minimal harness with the duet hook: WARMUPS + ITERATIONS timed iterations of an integer loop of
 * WORK steps. Valid C11 and C++11, so it also shows the header compiling as both:
 *
 *   cc  -O2 -std=c11   -Wall -Wextra -o example example.c
 *   c++ -O2 -std=c++17 -Wall -Wextra -x c++ -o example example.c
 *
 *   ./example ITERATIONS [WARMUPS] [WORK]
 *
 * It prints the harness's own per-iteration times (ns) on stdout; with the DUET_* environment of
 * `duet run` it also waits for the other side before each iteration and appends to the log.
 */
#include "duet.h"

#include <stdio.h>
#include <stdlib.h>

static uint64_t work(long steps)
{
    /* An LCG the compiler cannot fold away: the result is printed. */
    uint64_t x = 88172645463325252ULL;
    for (long i = 0; i < steps; i++)
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return x;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s ITERATIONS [WARMUPS] [WORK]\n", argv[0]);
        return 2;
    }
    long iterations = strtol(argv[1], NULL, 10);
    long warmups = argc > 2 ? strtol(argv[2], NULL, 10) : 0;
    long steps = argc > 3 ? strtol(argv[3], NULL, 10) : 1000000;
    uint64_t sink = 0;
    for (long i = 0; i < warmups + iterations; i++) {
        duet_set_kind(i < warmups ? 'w' : 'm');
        duet_before_iteration();
        int64_t t0 = duet_now_ns();
        sink += work(steps);
        int64_t t1 = duet_now_ns();
        duet_after_iteration();
        printf("%lld\n", (long long)(t1 - t0));
    }
    fprintf(stderr, "checksum %llu\n", (unsigned long long)sink);
    return 0;
}
