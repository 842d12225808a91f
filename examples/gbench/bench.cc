// A Google Benchmark program with the duet hook: one duet iteration per repetition.
//
//   c++ -O2 -std=c++17 -I../../adapters/c -o bench bench.cc -lbenchmark -lpthread
//   ./bench --benchmark_out=out.json --benchmark_out_format=json     # alone: the hook does nothing
//   duet run campaign.yml                                             # A against B, side by side
//
// WORK (compile-time, -DWORK=...) is the work per benchmark iteration, so that two builds make an A
// and a B with a known difference. docs/gbench.md explains the recipe.
#include "duet.h"

#include <benchmark/benchmark.h>

#include <cstdint>

#ifndef WORK
#define WORK 20000
#endif

// Google Benchmark times each repetition from its own clock; Setup and Teardown run right before
// and right after that timed region, once per repetition (not per thread), always from one thread.
// So each repetition is one duet iteration: both sides start it together and log its start and end.
static void before(const benchmark::State &) { duet_before_iteration(); }
static void after(const benchmark::State &) { duet_after_iteration(); }

static void BM_Xorshift(benchmark::State &state) {
    uint64_t x = 88172645463325252ull;
    for (auto _ : state) {
        for (int i = 0; i < WORK; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        benchmark::DoNotOptimize(x);
    }
}

// Fixed Iterations and Repetitions: both sides must run the same number of duet iterations, and
// Google Benchmark's adaptive iteration count would differ between A and B (the faster side would run
// more). Setup/Teardown need Google Benchmark 1.7.0 or newer.
BENCHMARK(BM_Xorshift)->Iterations(200)->Repetitions(10)->Setup(before)->Teardown(after);

BENCHMARK_MAIN();
