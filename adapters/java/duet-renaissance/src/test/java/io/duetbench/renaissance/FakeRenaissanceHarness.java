package io.duetbench.renaissance;

import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarFile;
import org.renaissance.Plugin;

/**
 * Test stand-in for the Renaissance harness: loads {@code --plugin JAR[!CLASS]} the way Renaissance
 * does (own class loader, class from the {@code Renaissance-Plugin} manifest attribute, jars that
 * bundle org.renaissance classes refused) and runs operations with Renaissance's per-operation event
 * sequence (research notes on harness hooks, section 3.2). Prints one line per published metric:
 * {@code metric OP NAME VALUE}. Usage: {@code FakeRenaissanceHarness --plugin JAR -r N [--work-ms MS] BENCHMARK}.
 */
public final class FakeRenaissanceHarness {
  private FakeRenaissanceHarness() {
  }

  public static void main(String[] argv) throws Exception {
    List<Plugin> plugins = new ArrayList<>();
    int repetitions = 1;
    double workMs = 5;
    String benchmark = "fake";
    for (int i = 0; i < argv.length; i++) {
      switch (argv[i]) {
        case "--plugin":
          plugins.add(load(argv[++i]));
          break;
        case "-r":
          repetitions = Integer.parseInt(argv[++i]);
          break;
        case "--work-ms":
          workMs = Double.parseDouble(argv[++i]);
          break;
        default:
          benchmark = argv[i];
      }
    }
    long vmStartNanos = System.nanoTime();
    long workNs = (long) (workMs * 1_000_000);
    long sink = 0;
    for (int op = 0; op < repetitions; op++) {
      System.gc(); // the built-in forced-GC plugin runs before external plugins
      for (Plugin p : plugins) {
        if (p instanceof Plugin.AfterOperationSetUpListener) {
          ((Plugin.AfterOperationSetUpListener) p).afterOperationSetUp(benchmark, op, op == repetitions - 1);
        }
      }
      long startNanos = System.nanoTime();
      long until = startNanos + workNs;
      while (System.nanoTime() < until) {
        sink++;
      }
      long durationNanos = System.nanoTime() - startNanos;
      // Tear-down listeners run in reverse registration order.
      for (int k = plugins.size() - 1; k >= 0; k--) {
        Plugin p = plugins.get(k);
        if (p instanceof Plugin.BeforeOperationTearDownListener) {
          ((Plugin.BeforeOperationTearDownListener) p).beforeOperationTearDown(benchmark, op, durationNanos);
        }
      }
      final int index = op;
      Plugin.MeasurementResultListener out =
          (bench, metric, value) -> System.out.println("metric " + index + " " + metric + " " + value);
      out.onMeasurementResult(benchmark, "uptime_ns", startNanos - vmStartNanos);
      out.onMeasurementResult(benchmark, "duration_ns", durationNanos);
      for (Plugin p : plugins) {
        if (p instanceof Plugin.MeasurementResultPublisher) {
          ((Plugin.MeasurementResultPublisher) p).onMeasurementResultsRequested(benchmark, op, out);
        }
      }
    }
    System.err.println(sink == 42 ? "" : "fake renaissance: done");
  }

  private static Plugin load(String spec) throws Exception {
    int bang = spec.indexOf('!');
    String jar = bang < 0 ? spec : spec.substring(0, bang);
    String className = bang < 0 ? null : spec.substring(bang + 1);
    try (JarFile jf = new JarFile(jar)) {
      if (jf.stream().anyMatch(e -> e.getName().startsWith("org/renaissance/"))) {
        System.err.println("plugin jar " + jar + " must not contain org.renaissance classes");
        System.exit(1);
      }
      if (className == null) {
        className = jf.getManifest().getMainAttributes().getValue("Renaissance-Plugin");
      }
    }
    if (className == null) {
      System.err.println("plugin jar " + jar + " has no Renaissance-Plugin manifest attribute");
      System.exit(1);
    }
    URLClassLoader loader = new URLClassLoader(new URL[] {new File(jar).toURI().toURL()},
        FakeRenaissanceHarness.class.getClassLoader());
    return (Plugin) loader.loadClass(className).getDeclaredConstructor().newInstance();
  }
}
