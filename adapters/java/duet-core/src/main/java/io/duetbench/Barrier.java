package io.duetbench;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * One party's view of a duet barrier page (docs/barrier-protocol.md, version 1), with the waiting
 * semantics of the C reference {@code native/duet_barrier.h}.
 *
 * <p>The page is a file mapped shared; all accesses to its fields go through byte-buffer view
 * VarHandles, whose atomic access modes on aligned ints/longs of a direct buffer are the same
 * hardware operations C11 atomics use, so Java and C parties can meet on one page.
 */
public final class Barrier {
  public static final int MAGIC = 0x54455544; // "DUET" read little-endian
  public static final int VERSION = 1;
  public static final int SIZE = 4096;

  public static final int ABORT_NONE = 0;
  public static final int ABORT_TIMEOUT = 1;
  public static final int ABORT_FAILED = 2;
  public static final int ABORT_USER = 3;
  public static final int ABORT_EXITED = 4;

  static final int OFF_MAGIC = 0;
  static final int OFF_VERSION = 4;
  static final int OFF_PARTIES = 8;
  static final int OFF_ABORT = 12;
  static final int OFF_ARRIVED = 64;
  static final int OFF_GENERATION = 128;

  /** Checking abort and the clock costs more than a pause; do it once per this many spins (a power of two). */
  private static final int CHECK_EVERY = 1024;

  private static final VarHandle INT =
      MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
  private static final VarHandle LONG =
      MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

  /** How a wait ended; the same outcomes as {@code enum duet_wait_result} in C. */
  public enum Result { RELEASED, TIMED_OUT, ABORTED, BAD_PAGE }

  private final ByteBuffer page;
  private final Path path;

  private Barrier(ByteBuffer page, Path path) {
    this.page = page;
    this.path = path;
  }

  /**
   * Maps the page at {@code path}. Refuses (IOException) a file too small to be a page, or one with
   * another magic or version: such a page belongs to someone else, and writing into it could corrupt it.
   */
  public static Barrier open(Path path) throws IOException {
    try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
      long size = channel.size();
      if (size < SIZE) {
        throw new IOException(path + " has " + size + " bytes, a barrier page has " + SIZE);
      }
      // The mapping outlives the channel; it is released when the buffer is collected.
      Barrier barrier = new Barrier(channel.map(FileChannel.MapMode.READ_WRITE, 0, SIZE), path);
      if (!barrier.valid()) {
        throw new IOException(String.format(
            "%s is not a duet barrier page of protocol version %d (magic 0x%08x, version %d, parties %d)",
            path, VERSION, barrier.field(OFF_MAGIC), barrier.field(OFF_VERSION), barrier.parties()));
      }
      return barrier;
    }
  }

  public Path path() {
    return path;
  }

  private int field(int offset) {
    return (int) INT.getVolatile(page, offset);
  }

  /** Same test as {@code duet_page_valid}: right magic and version, and at least one party. */
  public boolean valid() {
    return field(OFF_MAGIC) == MAGIC && field(OFF_VERSION) == VERSION && parties() != 0;
  }

  public int parties() {
    return field(OFF_PARTIES);
  }

  public int abortCode() {
    return field(OFF_ABORT);
  }

  /** What an abort code means, for messages. */
  public static String describeAbort(int code) {
    switch (code) {
      case ABORT_TIMEOUT:
        return "the other side timed out waiting";
      case ABORT_FAILED:
        return "the other side failed";
      case ABORT_USER:
        return "the duet was interrupted";
      case ABORT_EXITED:
        return "the other side's command exited";
      default:
        return "unknown abort reason";
    }
  }

  public long generation() {
    return (long) LONG.getVolatile(page, OFF_GENERATION);
  }

  /** Sets abort to {@code reason} unless a reason is already set: the first reason wins. */
  public boolean setAbort(int reason) {
    return INT.compareAndSet(page, OFF_ABORT, ABORT_NONE, reason);
  }

  /**
   * Waits until all parties have arrived. {@code timeoutNs <= 0} waits for ever. On timeout the
   * page is aborted, so that the partner does not wait for us either, now or later.
   */
  public Result await(long timeoutNs) {
    if (!valid()) {
      return Result.BAD_PAGE;
    }
    if (abortCode() != ABORT_NONE) {
      return Result.ABORTED;
    }
    // Read the clock before arriving even when we turn out to be last, as the C reference does:
    // the first clock read of a process is slow, and the releasing side stamps right after release.
    long arrivedAt = System.nanoTime();
    long gen = generation();
    int arrived = (int) INT.getAndAdd(page, OFF_ARRIVED, 1) + 1;
    if (Integer.compareUnsigned(arrived, parties()) >= 0) {
      INT.setVolatile(page, OFF_ARRIVED, 0);
      LONG.getAndAdd(page, OFF_GENERATION, 1L);
      return Result.RELEASED;
    }
    int spins = 0;
    while ((long) LONG.getAcquire(page, OFF_GENERATION) == gen) {
      Thread.onSpinWait();
      if ((++spins & (CHECK_EVERY - 1)) == 0) {
        boolean aborted = abortCode() != ABORT_NONE;
        // Difference, not comparison with a deadline: immune to overflow of nanoTime + timeout.
        if (!aborted && (timeoutNs <= 0 || System.nanoTime() - arrivedAt <= timeoutNs)) {
          continue;
        }
        // The release may have come after our last look at the generation, and the abort after it
        // (a partner that ran its whole last iteration while we were descheduled): it still counts.
        if (generation() != gen) {
          return Result.RELEASED;
        }
        if (aborted) {
          return Result.ABORTED;
        }
        setAbort(ABORT_TIMEOUT);
        return Result.TIMED_OUT;
      }
    }
    return Result.RELEASED;
  }
}
