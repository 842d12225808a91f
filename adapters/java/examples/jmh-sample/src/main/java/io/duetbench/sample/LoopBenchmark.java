package io.duetbench.sample;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.State;

/**
 * A CPU-bound loop whose cost is proportional to {@code size}: run side A with {@code -p size=N} and
 * side B with {@code -p size=2N} to get two "versions" with a known ratio.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class LoopBenchmark {
  @Param({"1000"})
  public int size;

  @Benchmark
  public long mix() {
    long h = 1125899906842597L;
    // A data dependency from one step to the next keeps the JIT from vectorizing or folding the loop.
    for (int i = 0; i < size; i++) {
      h = 31 * h + (h >>> 7) + i;
    }
    return h;
  }
}
