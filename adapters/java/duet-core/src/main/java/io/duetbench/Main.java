package io.duetbench;

import java.util.Locale;

/**
 * Small command-line tool shipped in every adapter jar, for checking a setup without a harness:
 * <pre>
 *   java -cp duet-jmh.jar io.duetbench.Main nanotime          # prints System.nanoTime()
 *   java -cp duet-jmh.jar io.duetbench.Main iterations N [MS]  # N iterations of MS ms busy work through the hook
 * </pre>
 */
public final class Main {
  private static final String USAGE = "usage: java -cp <duet jar> io.duetbench.Main nanotime | iterations N [WORK_MS]";

  private Main() {
  }

  public static void main(String[] args) {
    if (args.length == 1 && args[0].equals("nanotime")) {
      System.out.println(System.nanoTime());
      return;
    }
    if ((args.length == 2 || args.length == 3) && args[0].equals("iterations")) {
      try {
        int n = Integer.parseInt(args[1]);
        double workMs = args.length == 3 ? Double.parseDouble(args[2]) : 1.0;
        if (n >= 0 && workMs >= 0) {
          iterations(n, (long) (workMs * 1_000_000L));
          return;
        }
      } catch (NumberFormatException e) {
        // falls through to the usage message
      }
    }
    System.err.println(String.format(Locale.ROOT, "duetbench: bad arguments %s; %s", String.join(" ", args), USAGE));
    System.exit(2);
  }

  /** Busy work, not sleep: a sleeping side would give its CPU away, unlike a real benchmark. */
  private static void iterations(int n, long workNs) {
    DuetHook hook = DuetHook.get();
    long sink = 0;
    for (int i = 0; i < n; i++) {
      hook.beforeIteration();
      long until = System.nanoTime() + workNs;
      while (System.nanoTime() < until) {
        sink += i;
      }
      hook.afterIteration(DuetHook.MEASUREMENT);
    }
    if (sink == 42) {
      System.out.println(); // keeps the loop from being optimized away
    }
  }
}
