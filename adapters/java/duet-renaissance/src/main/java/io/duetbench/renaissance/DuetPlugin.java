package io.duetbench.renaissance;

import io.duetbench.DuetHook;
import org.renaissance.Plugin;

/**
 * Renaissance plugin for synchronous duets: {@code --plugin duet-renaissance.jar}. Waits at the duet
 * barrier after each operation's set-up, right before Renaissance starts timing it, and stamps the
 * end when Renaissance reports the operation's duration (docs/hooks.md); configured by the
 * {@code DUET_*} environment, inert without it.
 *
 * <p>When active it also publishes {@code duet_start_ns} and {@code duet_end_ns} (CLOCK_MONOTONIC)
 * as metrics of every operation, so Renaissance's own CSV/JSON can be joined with the iteration log.
 * Renaissance has no notion of warmup operations, so log lines carry no kind.
 */
public final class DuetPlugin
    implements Plugin.AfterOperationSetUpListener, Plugin.BeforeOperationTearDownListener,
    Plugin.MeasurementResultPublisher {

  /** Renaissance requires a public no-argument constructor; no side effects (the hook is lazy). */
  public DuetPlugin() {
  }

  @Override
  public void afterOperationSetUp(String benchmark, int opIndex, boolean isLastOp) {
    DuetHook.get().beforeIteration();
  }

  @Override
  public void beforeOperationTearDown(String benchmark, int opIndex, long durationNanos) {
    DuetHook.get().afterIteration(null);
  }

  @Override
  public void onMeasurementResultsRequested(String benchmark, int opIndex, MeasurementResultListener dispatcher) {
    DuetHook hook = DuetHook.get();
    // Published for every operation or none (the hook is active for the whole process or not at
    // all): Renaissance rejects results whose metrics have different counts.
    if (hook.active()) {
      dispatcher.onMeasurementResult(benchmark, "duet_start_ns", hook.lastStartNs());
      dispatcher.onMeasurementResult(benchmark, "duet_end_ns", hook.lastEndNs());
    }
  }
}
