package io.duetbench.jmh;

import io.duetbench.DuetHook;
import java.util.Collection;
import java.util.Collections;
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
        iterationParams.getType() == IterationType.WARMUP ? DuetHook.WARMUP : DuetHook.MEASUREMENT);
    return Collections.emptyList();
  }
}
