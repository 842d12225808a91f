package org.dacapo.harness;

import org.dacapo.parser.Config;

/**
 * Stand-in for DaCapo's {@code org.dacapo.harness.Callback} (9.12-MR1 / 23.x signatures, plus the
 * 9.12-bach {@code stop()}), so that adapters compile without the DaCapo jar. At run time the real
 * class from the DaCapo jar is used. The behaviour here follows DaCapo's fixed-count methodology
 * ({@code -n N}: N-1 warmup iterations, then one timing iteration) so that a fake harness in the
 * tests drives callbacks the way DaCapo does.
 */
public class Callback {
  protected enum Mode { WARMUP, TIMING }

  protected Mode mode;
  protected final CommandLineArgs args;
  /** Iterations of the current benchmark completed so far. */
  protected int iterations;
  /** Duration of the last iteration in ms (9.12-MR1 / 23.x). */
  protected long elapsed;
  /** Start of the current iteration in ms; the 9.12-bach harness times iterations with it. */
  protected long timer;

  public Callback(CommandLineArgs args) {
    this.args = args;
  }

  public void init(Config config) {
    iterations = 0;
    mode = args.getIterations() > 1 ? Mode.WARMUP : Mode.TIMING;
  }

  public boolean runAgain() {
    if (!isWarmup()) {
      return false;
    }
    iterations++;
    if (iterations >= args.getIterations() - 1) {
      mode = Mode.TIMING;
    }
    return true;
  }

  public boolean isWarmup() {
    return mode == Mode.WARMUP;
  }

  public void start(String benchmark) {
    start(benchmark, isWarmup());
  }

  protected void start(String benchmark, boolean warmup) {
    timer = System.currentTimeMillis();
    System.err.println("===== DaCapo (stub) " + benchmark + " starting " + (warmup ? "warmup " + (iterations + 1) + " " : "") + "=====");
  }

  /** 9.12-MR1 / 23.x: the harness measured the iteration itself. */
  public void stop(long duration) {
    stop(duration, isWarmup());
  }

  public void stop(long duration, boolean warmup) {
    elapsed = duration;
  }

  /** 9.12-bach: the callback's own timer measures the iteration. */
  public void stop() {
    elapsed = System.currentTimeMillis() - timer;
  }

  public void complete(String benchmark, boolean valid) {
    complete(benchmark, valid, isWarmup());
  }

  protected void complete(String benchmark, boolean valid, boolean warmup) {
    System.err.println("===== DaCapo (stub) " + benchmark + (valid ? (warmup ? " completed warmup " + (iterations + 1) : " PASSED") + " in " + elapsed + " msec" : " FAILED") + " =====");
  }
}
