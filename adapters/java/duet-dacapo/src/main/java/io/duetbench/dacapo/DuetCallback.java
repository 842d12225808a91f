package io.duetbench.dacapo;

import io.duetbench.DuetHook;
import org.dacapo.harness.Callback;
import org.dacapo.harness.CommandLineArgs;

/**
 * DaCapo callback for synchronous duets: {@code -c io.duetbench.dacapo.DuetCallback}. Waits at the
 * duet barrier before every iteration, warmups included, and logs each iteration's start and end
 * (docs/hooks.md); configured by the {@code DUET_*} environment, inert without it.
 *
 * <p>Binary-compatible with DaCapo 9.12-bach, 9.12-MR1 and 23.x: it overrides both {@code stop()}
 * (9.12-bach) and {@code stop(long)} (9.12-MR1, 23.x); the harness calls the one its base class has.
 * The wait comes before {@code super.start}, because 9.12-bach starts its timer inside it; later
 * versions start theirs after {@code start} returns. The end is stamped on entry to {@code stop}.
 */
public class DuetCallback extends Callback {
  private String kind;

  /** The constructor DaCapo requires of a {@code -c} class; no side effects (hooks are lazy). */
  public DuetCallback(CommandLineArgs args) {
    super(args);
  }

  @Override
  public void start(String benchmark) {
    // isWarmup() is stable from start to complete: the harness changes it in runAgain().
    kind = isWarmup() ? DuetHook.WARMUP : DuetHook.MEASUREMENT;
    DuetHook.get().beforeIteration();
    super.start(benchmark);
  }

  /** 9.12-MR1 and 23.x. */
  @Override
  public void stop(long duration) {
    DuetHook.get().afterIteration(kind);
    super.stop(duration);
  }

  /** 9.12-bach. */
  @Override
  public void stop() {
    DuetHook.get().afterIteration(kind);
    super.stop();
  }
}
