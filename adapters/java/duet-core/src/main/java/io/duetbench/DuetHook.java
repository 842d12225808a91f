package io.duetbench;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.function.Function;

/**
 * The harness hook of docs/hooks.md: {@link #beforeIteration()} waits at the duet barrier and stamps
 * the start, {@link #afterIteration(String)} stamps the end and appends one line to the iteration log.
 * Same behaviour and messages as the C hook of adapters/c/duet.h.
 *
 * <p>One instance per process ({@link #get()}), shared by every adapter loaded in it, because the
 * log's index is the iteration counter of the process. Nothing is read from the environment until
 * the first {@code beforeIteration}: harnesses construct their plugins in processes that never run
 * an iteration (JMH's host JVM). With no {@code DUET_*} variable set the hook does nothing.
 *
 * <p>The hook never throws into the harness. A problem (unusable barrier, log or variable) is reported
 * once on stderr; after an abort or a timeout the hook stops synchronizing and keeps logging, so one
 * side running fewer iterations, crashing or hanging never hangs the other.
 *
 * <p>Clock: {@link System#nanoTime()}, which on Linux is CLOCK_MONOTONIC in nanoseconds, the clock
 * the iteration log is defined on (checked by tests/test_java_adapters.py).
 */
public final class DuetHook {
  public static final String ENV_SIDE = "DUET_SIDE";
  public static final String ENV_LOG = "DUET_ITERATION_LOG";
  public static final String ENV_BARRIER = "DUET_BARRIER";
  public static final String ENV_TIMEOUT = "DUET_BARRIER_TIMEOUT_MS";
  public static final long DEFAULT_TIMEOUT_MS = 600_000;

  public static final String WARMUP = "w";
  public static final String MEASUREMENT = "m";

  /** What {@link #state()} reports; the same states as the C hook's {@code duet_hook_state()}. */
  public enum State {
    /** No iteration yet: the environment has not been read. */
    NOT_STARTED,
    /** No usable DUET_* environment: every call does nothing. */
    OFF,
    /** No barrier (sequential or asynchronous duet, or an unusable page): iterations are only logged. */
    LOG_ONLY,
    /** Every iteration so far started through the barrier. */
    SYNCING,
    /** A wait was aborted or timed out: logging goes on unsynchronized. */
    SYNC_LOST
  }

  private static final DuetHook PROCESS = new DuetHook(System::getenv, System.err);

  private final Function<String, String> env;
  private final PrintStream err;

  private State state = State.NOT_STARTED;
  private char side;
  private FileOutputStream log;
  private boolean logFailed;
  private Barrier barrier;
  private long timeoutNs;

  private long index;
  private long synced;
  private boolean pending;
  private long startNs;
  private long endNs;

  DuetHook(Function<String, String> env, PrintStream err) {
    this.env = env;
    this.err = err;
  }

  /** The hook of this process. */
  public static DuetHook get() {
    return PROCESS;
  }

  /**
   * Wait for the other side (when synchronizing), then stamp the start of an iteration. Returns
   * whether this iteration started through the barrier.
   */
  public boolean beforeIteration() {
    synchronized (this) {
      if (state == State.NOT_STARTED) {
        start();
      }
      if (state == State.OFF) {
        return false;
      }
      Barrier.Result result = Barrier.Result.RELEASED;
      if (state == State.SYNCING) {
        try {
          result = barrier.await(timeoutNs);
        } catch (RuntimeException | InternalError e) {
          // InternalError: how the JVM reports a fault on a mapped file truncated under us.
          result = Barrier.Result.BAD_PAGE;
        }
      }
      startNs = System.nanoTime();
      pending = true;
      if (state != State.SYNCING) {
        return false;
      }
      if (result == Barrier.Result.RELEASED) {
        synced++;
        return true;
      }
      loseSync(result);
      return false;
    }
  }

  /**
   * Stamp the end of the iteration begun by the last {@link #beforeIteration()} and log it.
   * {@code kind} is {@link #WARMUP}, {@link #MEASUREMENT} or null (unknown). A call without an
   * iteration in progress is ignored, so a harness that reports an end twice logs one line.
   */
  public void afterIteration(String kind) {
    afterIteration(kind, Double.NaN);
  }

  /**
   * Like {@link #afterIteration(String)}, and logs the harness's own value for the iteration in
   * seconds per operation (iteration log field 6, docs/hooks.md) when it is positive and finite and
   * {@code kind} is known; NaN means none.
   */
  public void afterIteration(String kind, double valueSeconds) {
    long now = System.nanoTime();
    synchronized (this) {
      if (!pending) {
        return;
      }
      pending = false;
      endNs = now;
      long i = index++;
      if (log != null) {
        String value = kind != null && valueSeconds > 0 && !Double.isInfinite(valueSeconds)
            ? " " + Double.toString(valueSeconds) : "";
        write(side + " " + i + " " + startNs + " " + endNs + (kind == null ? "" : " " + kind) + value + "\n");
      }
    }
  }

  public synchronized State state() {
    return state;
  }

  /** Whether the environment switched the hook on (false before the first iteration). */
  public synchronized boolean active() {
    return state != State.NOT_STARTED && state != State.OFF;
  }

  /** Iterations of this process that started through the barrier. */
  public synchronized long synced() {
    return synced;
  }

  /** Start of the last iteration begun, CLOCK_MONOTONIC ns. */
  public synchronized long lastStartNs() {
    return startNs;
  }

  /** End of the last iteration completed, CLOCK_MONOTONIC ns. */
  public synchronized long lastEndNs() {
    return endNs;
  }

  private void start() {
    state = State.OFF;
    String sideValue = env.apply(ENV_SIDE);
    String logPath = env.apply(ENV_LOG);
    String barrierPath = env.apply(ENV_BARRIER);
    String timeout = env.apply(ENV_TIMEOUT);
    if (sideValue == null && logPath == null && barrierPath == null) {
      return;
    }
    Barrier page = barrierPath == null || barrierPath.isEmpty() ? null : openBarrier(barrierPath);
    if (!"A".equals(sideValue) && !"B".equals(sideValue)) {
      warn(ENV_SIDE + " must be A or B, not '" + (sideValue == null ? "" : sideValue) + "'; the duet hook is off");
      if (page != null) {
        page.setAbort(Barrier.ABORT_FAILED); // so that the partner does not wait for us
      }
      return;
    }
    side = sideValue.charAt(0);
    long ms = DEFAULT_TIMEOUT_MS;
    if (timeout != null && !timeout.isEmpty()) {
      try {
        ms = Long.parseLong(timeout);
      } catch (NumberFormatException e) {
        ms = 0;
      }
      if (ms <= 0) {
        warn(ENV_TIMEOUT + " must be a positive number of milliseconds, not '" + timeout + "'; using "
            + DEFAULT_TIMEOUT_MS);
        ms = DEFAULT_TIMEOUT_MS;
      }
    }
    timeoutNs = ms > Long.MAX_VALUE / 1_000_000L ? Long.MAX_VALUE : ms * 1_000_000L;
    if (logPath != null && !logPath.isEmpty()) {
      try {
        // Not a FileChannel: a thread with its interrupt flag set (JMH interrupts on timeouts) would
        // close a channel for good at its next write. FileOutputStream in append mode is O_APPEND.
        log = new FileOutputStream(logPath, true);
      } catch (IOException | RuntimeException e) {
        warn("cannot open the iteration log " + ENV_LOG + "=" + logPath + ": " + describe(e)
            + "; iterations are not logged");
      }
    }
    barrier = page;
    state = page != null ? State.SYNCING : State.LOG_ONLY;
  }

  private Barrier openBarrier(String path) {
    try {
      return Barrier.open(Paths.get(path));
    } catch (IOException | RuntimeException e) {
      warn("cannot use the barrier " + ENV_BARRIER + "=" + path + ": " + describe(e) + "; running unsynchronized");
      return null;
    }
  }

  private void loseSync(Barrier.Result result) {
    state = State.SYNC_LOST;
    String what = "side " + side + " stopped synchronizing at iteration " + index + ": ";
    switch (result) {
      case TIMED_OUT:
        what += "the other side did not arrive within " + timeoutNs / 1_000_000L + " ms (" + ENV_TIMEOUT + ")";
        break;
      case ABORTED:
        int code = abortCode();
        what += Barrier.describeAbort(code) + " (abort code " + code + ")";
        break;
      default:
        what += "the barrier page was overwritten";
    }
    warn(what + "; going on unsynchronized");
    barrier = null;
  }

  private int abortCode() {
    try {
      return barrier.abortCode();
    } catch (RuntimeException | InternalError e) {
      return -1;
    }
  }

  private void write(String line) {
    try {
      // One write() on an O_APPEND descriptor (a line is far shorter than anything the kernel would
      // split): lines of several processes of one side never interleave.
      log.write(line.getBytes(StandardCharsets.US_ASCII));
    } catch (IOException | RuntimeException e) {
      if (!logFailed) {
        warn("cannot append to the iteration log: " + describe(e));
      }
      logFailed = true;
    }
  }

  private void warn(String message) {
    err.println("duet: " + message);
    err.flush();
  }

  private static String describe(Exception e) {
    String message = e.getMessage();
    return message == null ? e.getClass().getSimpleName() : message;
  }
}
