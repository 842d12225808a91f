package org.renaissance;

/**
 * Stand-in for Renaissance's plugin API (unchanged since Renaissance 0.11): a marker interface whose
 * nested listener interfaces are the hook points of the harness. Signatures only; the real
 * interface comes from the Renaissance jar at run time.
 */
public interface Plugin {
  interface AfterHarnessInitListener extends Plugin {
    void afterHarnessInit();
  }

  interface BeforeHarnessShutdownListener extends Plugin {
    void beforeHarnessShutdown();
  }

  interface BeforeBenchmarkSetUpListener extends Plugin {
    void beforeBenchmarkSetUp(String benchmark);
  }

  interface AfterBenchmarkSetUpListener extends Plugin {
    void afterBenchmarkSetUp(String benchmark);
  }

  interface BeforeBenchmarkTearDownListener extends Plugin {
    void beforeBenchmarkTearDown(String benchmark);
  }

  interface AfterBenchmarkTearDownListener extends Plugin {
    void afterBenchmarkTearDown(String benchmark);
  }

  /** Called after an operation's set-up, right before the harness starts timing it. */
  interface AfterOperationSetUpListener extends Plugin {
    void afterOperationSetUp(String benchmark, int opIndex, boolean isLastOp);
  }

  /** Called right after the harness stopped timing an operation, before its tear-down. */
  interface BeforeOperationTearDownListener extends Plugin {
    void beforeOperationTearDown(String benchmark, int opIndex, long durationNanos);
  }

  interface MeasurementResultListener extends Plugin {
    void onMeasurementResult(String benchmark, String metric, long value);
  }

  /** Asked once per valid operation, after its tear-down notification, to publish extra metrics. */
  interface MeasurementResultPublisher extends Plugin {
    void onMeasurementResultsRequested(String benchmark, int opIndex, MeasurementResultListener dispatcher);
  }

  interface BenchmarkFailureListener extends Plugin {
    void onBenchmarkFailure(String benchmark);
  }

  interface ExecutionPolicy extends Plugin {
    boolean canExecute(String benchmark, int opIndex);

    boolean isLast(String benchmark, int opIndex);
  }
}
