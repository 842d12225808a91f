package io.duetbench.jmh;

import io.duetbench.DuetHook;
import java.util.Collection;
import java.util.Collections;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.runner.IterationType;

/**
 * JMH profiler that makes every iteration (warmup and measurement) of a synchronous duet start
 * together with the other side's, and logs its start/end to the iteration log (docs/hooks.md).
 * Enable with {@code -prof io.duetbench.jmh.DuetProfiler}; configured by the {@code DUET_*}
 * environment, which JMH's forked JVMs inherit. Without it the profiler does nothing.
 *
 * <p>JMH calls {@code beforeIteration} in the forked JVM before it submits the benchmark threads,
 * and {@code afterIteration} after they finished and {@code @TearDown(Level.Iteration)} ran; so the
 * logged interval slightly encloses JMH's own measurement, the same way on both sides.
 */
public final class DuetProfiler implements InternalProfiler {

  /** Must stay free of side effects: JMH's host JVM instantiates profilers only to validate them. */
  public DuetProfiler() {
  }

  @Override
  public String getDescription() {
    return "duetbench synchronous duet: barrier before every iteration, start/end in the iteration log (DUET_* env)";
  }

  @Override
  public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
    DuetHook.get().beforeIteration();
  }

  /** Returns no results: the timestamps go to the iteration log, not into JMH's result file. */
  @Override
  public Collection<? extends Result> afterIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams,
      IterationResult result) {
    DuetHook.get().afterIteration(
        iterationParams.getType() == IterationType.WARMUP ? DuetHook.WARMUP : DuetHook.MEASUREMENT,
        secondsPerOp(benchmarkParams.getMode(), result));
    return Collections.emptyList();
  }

  /**
   * The iteration's primary score as seconds per operation, NaN when it has none (mode "all", an
   * unknown unit): JMH iterations last a fixed time, so only the score tells how fast they were.
   */
  static double secondsPerOp(Mode mode, IterationResult result) {
    try {
      Result<?> primary = result.getPrimaryResult();
      double score = primary.getScore();
      String unit = primary.getScoreUnit();
      if (!(score > 0) || Double.isInfinite(score) || unit == null) {
        return Double.NaN;
      }
      if (mode == Mode.Throughput && unit.startsWith("ops/")) {
        return seconds(unit.substring(4)) / score;
      }
      if ((mode == Mode.AverageTime || mode == Mode.SampleTime || mode == Mode.SingleShotTime)
          && unit.endsWith("/op")) {
        return seconds(unit.substring(0, unit.length() - 3)) * score;
      }
    } catch (RuntimeException e) {
      // A profiler must never break the benchmark: no value is logged, the duration still is.
    }
    return Double.NaN;
  }

  private static double seconds(String unit) {
    switch (unit) {
      case "ns": return 1e-9;
      case "us": return 1e-6;
      case "ms": return 1e-3;
      case "s": return 1.0;
      case "min": return 60.0;
      case "hr": return 3600.0;
      case "day": return 86400.0;
      default: return Double.NaN;
    }
  }
}
