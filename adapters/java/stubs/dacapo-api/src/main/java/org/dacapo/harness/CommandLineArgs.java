package org.dacapo.harness;

/**
 * Stand-in for DaCapo's parsed command line. Only what the stub {@link Callback} needs: the fixed
 * iteration count given with {@code -n N} (or {@code --iterations N}); default 1 as in DaCapo.
 */
public class CommandLineArgs {
  private int iterations = 1;

  public CommandLineArgs(String[] args) {
    for (int i = 0; i + 1 < args.length; i++) {
      if (args[i].equals("-n") || args[i].equals("--iterations")) {
        iterations = Integer.parseInt(args[i + 1]);
      }
    }
  }

  public int getIterations() {
    return iterations;
  }
}
