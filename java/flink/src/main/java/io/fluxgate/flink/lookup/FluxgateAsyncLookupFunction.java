package io.fluxgate.flink.lookup;

import io.fluxgate.client.ConnectionSettings;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.flink.Release;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.functions.AsyncLookupFunction;
import org.apache.flink.table.functions.FunctionContext;

/**
 * 'lookup.async'='true' (the default): keys queue up while earlier batches are on the wire. Each of
 * {@link #streams} threads owns one DoExchange stream and sends every key waiting, up to {@link
 * #MAX_BATCH}, as one batch, so that batches grow with the load and several are in flight. How many
 * keys a subtask has outstanding is Flink's table.exec.async-lookup.buffer-capacity.
 */
public final class FluxgateAsyncLookupFunction extends AsyncLookupFunction {
  static final int MAX_BATCH = 4096;

  private final ConnectionSettings connection;
  private final LookupSpec spec;
  private transient BufferAllocator allocator;
  private transient FluxgateClient client;
  private transient BlockingQueue<Pending> waiting;
  private transient List<LookupSession> sessions;
  private transient List<Thread> threads;
  private transient volatile boolean closed;

  private record Pending(RowData key, CompletableFuture<Collection<RowData>> rows) {}

  FluxgateAsyncLookupFunction(ConnectionSettings connection, LookupSpec spec) {
    this.connection = connection;
    this.spec = spec;
  }

  @Override
  public void open(FunctionContext context) {
    allocator = new RootAllocator();
    client = connection.connect();
    waiting = new LinkedBlockingQueue<>();
    sessions = new ArrayList<>();
    threads = new ArrayList<>();
    closed = false;
    for (int i = 0; i < streams(); i++) {
      // Opened here, so that a table that cannot be looked up fails the job at its start.
      LookupSession session = new LookupSession(client, allocator, spec);
      sessions.add(session);
      Thread t = new Thread(() -> serve(session), "fluxgate-lookup-" + spec.table() + "-" + i);
      t.setDaemon(true);
      threads.add(t);
    }
    threads.forEach(Thread::start);
  }

  /**
   * Lookups of present keys run in parallel on the server: 4 streams. A dictionary's keys take one
   * stream, whose batches grow instead: the server gives the new keys of one batch ids in the
   * batch's order and answers one stream's batches in turn, so one stream gives ids in the order
   * the keys arrive, the same on every run; two would race each other for the next id.
   */
  private int streams() {
    return spec.insertIfNotExists() ? 1 : 4;
  }

  @Override
  public CompletableFuture<Collection<RowData>> asyncLookup(RowData key) {
    CompletableFuture<Collection<RowData>> rows = new CompletableFuture<>();
    waiting.add(new Pending(key, rows));
    if (closed) {
      rows.completeExceptionally(new CancellationException("lookup function closed"));
    }
    return rows;
  }

  private void serve(LookupSession session) {
    List<Pending> batch = new ArrayList<>();
    List<RowData> keys = new ArrayList<>();
    try {
      while (!closed) {
        batch.add(waiting.take());
        waiting.drainTo(batch, MAX_BATCH - 1);
        for (Pending p : batch) {
          keys.add(p.key());
        }
        try {
          List<List<RowData>> rows = session.lookup(keys);
          for (int i = 0; i < batch.size(); i++) {
            batch.get(i).rows().complete(rows.get(i));
          }
        } catch (RuntimeException e) {
          batch.forEach(p -> p.rows().completeExceptionally(e));
        }
        batch.clear();
        keys.clear();
      }
    } catch (InterruptedException e) {
      // closing
    }
  }

  @Override
  public void close() throws InterruptedException {
    closed = true;
    if (threads != null) {
      threads.forEach(Thread::interrupt);
      for (Thread t : threads) {
        t.join();
      }
    }
    if (waiting != null) {
      waiting.forEach(
          p -> p.rows().completeExceptionally(new CancellationException("lookup function closed")));
    }
    List<AutoCloseable> resources = new ArrayList<>();
    if (sessions != null) {
      resources.addAll(sessions);
    }
    resources.add(client);
    resources.add(allocator);
    Release.all(this, resources.toArray(AutoCloseable[]::new));
  }
}
