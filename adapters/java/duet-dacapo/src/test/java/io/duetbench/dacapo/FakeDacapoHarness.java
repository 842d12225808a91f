package io.duetbench.dacapo;

import java.io.File;
import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import org.dacapo.harness.Callback;
import org.dacapo.harness.CommandLineArgs;
import org.dacapo.parser.Config;

/**
 * Test stand-in for DaCapo's harness: loads a {@code -c} callback the way DaCapo does and drives it
 * with DaCapo's per-iteration call sequence (research notes on harness hooks, section 2.2).
 * Usage: {@code FakeDacapoHarness [--bach] [--work-ms MS] -c CLASS -n N BENCHMARK}; {@code --bach}
 * reports the end with 9.12-bach's {@code stop()} instead of {@code stop(long)}. As in DaCapo
 * 9.12-MR1 and 23.x, the system property {@code dacapo.callback.classpath} (a directory, or an
 * absolute URI such as {@code file:///path/duet-dacapo.jar}) adds the callback's classes to the
 * harness's class loader.
 */
public final class FakeDacapoHarness {
  private FakeDacapoHarness() {
  }

  public static void main(String[] argv) throws Exception {
    boolean bach = false;
    double workMs = 5;
    String callbackClass = Callback.class.getName();
    String benchmark = null;
    for (int i = 0; i < argv.length; i++) {
      switch (argv[i]) {
        case "--bach":
          bach = true;
          break;
        case "--work-ms":
          workMs = Double.parseDouble(argv[++i]);
          break;
        case "-c":
          callbackClass = argv[++i];
          break;
        case "-n":
          i++; // read by CommandLineArgs
          break;
        default:
          benchmark = argv[i];
      }
    }
    ClassLoader loader = FakeDacapoHarness.class.getClassLoader();
    String callbackPath = System.getProperty("dacapo.callback.classpath");
    if (callbackPath != null) {
      File file = new File(callbackPath);
      URI uri = file.isDirectory() ? file.getAbsoluteFile().toURI() : new URI(callbackPath);
      loader = URLClassLoader.newInstance(new URL[] {uri.toURL()}, loader);
    }
    Class<?> cls;
    try {
      cls = Class.forName(callbackClass, true, loader);
    } catch (ClassNotFoundException e) {
      System.err.println("Could not find callback class " + callbackClass);
      System.exit(2);
      return;
    }
    if (!Callback.class.isAssignableFrom(cls)) {
      System.err.println(callbackClass + " is not an instance of org.dacapo.harness.Callback");
      System.exit(3);
    }
    Callback callback = (Callback) cls.getConstructor(CommandLineArgs.class).newInstance(new CommandLineArgs(argv));
    callback.init(new Config(benchmark));
    long workNs = (long) (workMs * 1_000_000);
    long sink = 0;
    do {
      System.gc(); // DaCapo's pre-iteration GC comes before the callback's start
      callback.start(benchmark);
      long start = System.currentTimeMillis();
      long until = System.nanoTime() + workNs;
      while (System.nanoTime() < until) {
        sink++;
      }
      long duration = System.currentTimeMillis() - start;
      if (bach) {
        callback.stop();
      } else {
        callback.stop(duration);
      }
      callback.complete(benchmark, true);
    } while (callback.runAgain());
    System.out.println(sink == 42 ? "" : "done");
  }
}
