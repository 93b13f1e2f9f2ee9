package io.fluxgate.spark;

import io.fluxgate.client.FluxgateClient;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;

/**
 * The clients of one JVM (the driver or an executor), shared by the driver's planning calls and the
 * tasks' reads and writes: connecting (TCP, TLS) costs more than reading a small bucket, and a
 * query makes several calls. A client nobody holds is closed after {@link #KEEP_ALIVE_MS}. Options
 * with a username are not shared: their handshake token expires (PROTOCOL.md §8), so each lease
 * shakes hands anew.
 */
final class Clients {
  static final long KEEP_ALIVE_MS = 30_000;

  private static final Map<FluxgateOptions, Shared> SHARED = new HashMap<>();
  private static final ScheduledExecutorService CLOSER =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "fluxgate-spark-client-closer");
            t.setDaemon(true);
            return t;
          });

  private Clients() {}

  /** A client for options, held until the lease is closed. */
  static Lease lease(FluxgateOptions options) {
    if (options.username() != null) {
      BufferAllocator allocator = new RootAllocator();
      try {
        FluxgateClient client = options.connect(allocator);
        return new Lease(client, () -> close(client, allocator));
      } catch (RuntimeException e) {
        allocator.close();
        throw e;
      }
    }
    synchronized (SHARED) {
      Shared s = SHARED.get(options);
      if (s == null) {
        s = new Shared(options);
        SHARED.put(options, s);
      }
      s.holders++;
      if (s.closing != null) {
        s.closing.cancel(false);
        s.closing = null;
      }
      Shared held = s;
      return new Lease(s.client, () -> release(held));
    }
  }

  private static void release(Shared s) {
    synchronized (SHARED) {
      if (--s.holders == 0) {
        s.closing = CLOSER.schedule(() -> closeIfIdle(s), KEEP_ALIVE_MS, TimeUnit.MILLISECONDS);
      }
    }
  }

  private static void closeIfIdle(Shared s) {
    synchronized (SHARED) {
      if (s.holders > 0 || SHARED.get(s.options) != s) {
        return;
      }
      SHARED.remove(s.options);
    }
    close(s.client, s.allocator);
  }

  private static void close(FluxgateClient client, BufferAllocator allocator) {
    try {
      client.close();
    } finally {
      allocator.close();
    }
  }

  /** A client shared by options, and how many leases hold it. */
  private static final class Shared {
    final FluxgateOptions options;
    final BufferAllocator allocator = new RootAllocator();
    final FluxgateClient client;
    int holders;
    ScheduledFuture<?> closing;

    Shared(FluxgateOptions options) {
      this.options = options;
      try {
        this.client = options.connect(allocator);
      } catch (RuntimeException e) {
        allocator.close();
        throw e;
      }
    }
  }

  /** A held client; closing the lease lets it go, not the client. */
  static final class Lease implements AutoCloseable {
    private final FluxgateClient client;
    private final Runnable release;
    private boolean closed;

    private Lease(FluxgateClient client, Runnable release) {
      this.client = client;
      this.release = release;
    }

    FluxgateClient client() {
      return client;
    }

    @Override
    public void close() {
      if (!closed) {
        closed = true;
        release.run();
      }
    }
  }
}
