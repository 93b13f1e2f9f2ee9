package io.fluxgate.flink;

import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.FluxgateException;
import io.fluxgate.client.TicketStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.table.data.RowData;

/**
 * Reads its buckets, each on its own thread (an unbounded bucket's stream never ends), through a
 * small queue of converted batches. A bucket's split state advances only when its batch has been
 * emitted, so a checkpoint holds exactly what went downstream, also inside a snapshot (see {@link
 * BucketSplit}).
 */
final class BucketReader implements SourceReader<RowData, BucketSplit> {
  private static final int QUEUE_BATCHES = 8;
  private static final long STOP_NANOS = 10_000_000_000L;

  /**
   * A batch (rows, perhaps null) and the split's state once it is emitted, or (after null) the end
   * of a split, or a failure.
   */
  private record Fetched(String splitId, ColumnarBatch rows, BucketSplit after, Throwable error) {}

  private final Connection connection;
  private final ScanSpec spec;
  private final BlockingQueue<Fetched> queue = new ArrayBlockingQueue<>(QUEUE_BATCHES);
  private final Object lock = new Object();
  private CompletableFuture<Void> available = new CompletableFuture<>();

  /** The splits being read, as a checkpoint would store them now. */
  private final Map<String, BucketSplit> splits = new HashMap<>();

  private final Map<String, Thread> threads = new HashMap<>();
  private final Map<String, TicketStream> streams = new ConcurrentHashMap<>();
  private FluxgateClient client;

  /** The batch whose rows pollNext emitted last, freed at the next call. */
  private ColumnarBatch emitted;

  private boolean noMoreSplits;
  private volatile boolean closed;

  BucketReader(Connection connection, ScanSpec spec) {
    this.connection = connection;
    this.spec = spec;
  }

  @Override
  public void start() {
    client = connection.connect();
    splits.values().forEach(this::launch); // restored splits come before start
  }

  @Override
  public void addSplits(List<BucketSplit> added) {
    for (BucketSplit split : added) {
      splits.put(split.splitId(), split);
      if (client != null) {
        launch(split);
      }
    }
  }

  private void launch(BucketSplit split) {
    Thread t = new Thread(() -> fetch(split), "fluxgate-" + split.splitId());
    t.setDaemon(true);
    threads.put(split.splitId(), t);
    t.start();
  }

  private void fetch(BucketSplit split) {
    Throwable error = null;
    try {
      BucketSplit rest = split;
      if (!split.resumable()) {
        read(split, split.ticket()); // several buckets in turn (a limit): read whole
        rest = null;
      } else if (split.inSnapshot()) {
        long at = readSnapshot(split);
        rest = split.afterSnapshot(at);
        if (rest != null && !closed) {
          put(new Fetched(split.splitId(), null, rest, null));
        }
      }
      if (rest != null) {
        read(rest, rest.readTicket());
      }
    } catch (FluxgateException.NotFound e) {
      // A partition dropped while it was read (by hand, or expired): its split is over, as in
      // Fluss.
      if (!client.partitionDropped(split.ticket())) {
        error = e;
      }
    } catch (Throwable t) {
      error = t;
    }
    // Only now, with the streams' buffers freed: the reader may close the client once it is told.
    if (!closed) {
      put(new Fetched(split.splitId(), null, null, error));
    }
  }

  /**
   * Emits the split's snapshot, recording after each batch the key of its last row (the snapshot
   * comes in key order), and returns the offset the snapshot was taken at.
   */
  private long readSnapshot(BucketSplit split) {
    long at = -1;
    BucketSplit after = split;
    try (TicketStream stream = open(split, split.readTicket())) {
      while (!closed && stream.next()) {
        VectorSchemaRoot root = stream.root();
        at = stream.meta().next(); // every snapshot batch carries the snapshot's offset
        if (root.getRowCount() > 0 && !split.keyColumns().isEmpty()) {
          List<FieldVector> keys = new ArrayList<>();
          split.keyColumns().forEach(k -> keys.add(root.getVector(k)));
          after = split.snapshotEmitted(SnapshotKeys.of(keys, root.getRowCount() - 1), at);
        }
        put(new Fetched(split.splitId(), convert(root), after, null));
      }
    } finally {
      streams.remove(split.splitId());
    }
    return at;
  }

  /** Emits what ticket reads (a log, changelog or union), recording each batch's next. */
  private void read(BucketSplit split, byte[] ticket) {
    try (TicketStream stream = open(split, ticket)) {
      while (!closed && stream.next()) {
        BucketSplit after = split.resumable() ? split.resumeAt(stream.meta().next()) : split;
        put(new Fetched(split.splitId(), convert(stream.root()), after, null));
      }
    } finally {
      streams.remove(split.splitId());
    }
  }

  private TicketStream open(BucketSplit split, byte[] ticket) {
    TicketStream stream = client.read(ticket);
    streams.put(split.splitId(), stream);
    return stream;
  }

  private ColumnarBatch convert(VectorSchemaRoot root) {
    int fields = spec.columns().size() - (spec.changelog() ? 1 : 0); // columns has _change_type
    return new ColumnarBatch(
        root, spec.leadingColumns(), fields, spec.changelog(), client.allocator());
  }

  private void put(Fetched f) {
    try {
      queue.put(f);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      if (f.rows() != null) {
        f.rows().close();
      }
      return;
    }
    synchronized (lock) {
      available.complete(null);
    }
  }

  @Override
  public InputStatus pollNext(ReaderOutput<RowData> output) throws Exception {
    releaseEmitted();
    Fetched f = queue.poll();
    if (f == null) {
      return noMoreSplits && splits.isEmpty()
          ? InputStatus.END_OF_INPUT
          : InputStatus.NOTHING_AVAILABLE;
    }
    if (f.error() != null) {
      throw new RuntimeException(
          "fluxgate split " + f.splitId() + ": " + f.error().getMessage(), f.error());
    }
    if (f.after() == null) {
      splits.remove(f.splitId());
      return InputStatus.MORE_AVAILABLE;
    }
    if (f.rows() != null) {
      emitted = f.rows();
      for (int i = 0; i < emitted.rows(); i++) {
        output.collect(emitted.row(i));
      }
    }
    splits.put(f.splitId(), f.after());
    return InputStatus.MORE_AVAILABLE;
  }

  /** Frees the batch emitted last: its rows went downstream in the last call. */
  private void releaseEmitted() {
    if (emitted != null) {
      emitted.close();
      emitted = null;
    }
  }

  @Override
  public CompletableFuture<Void> isAvailable() {
    synchronized (lock) {
      if (!queue.isEmpty() || (noMoreSplits && splits.isEmpty())) {
        return CompletableFuture.completedFuture(null);
      }
      if (available.isDone()) {
        available = new CompletableFuture<>();
      }
      return available;
    }
  }

  @Override
  public void notifyNoMoreSplits() {
    noMoreSplits = true;
    synchronized (lock) {
      available.complete(null);
    }
  }

  @Override
  public List<BucketSplit> snapshotState(long checkpointId) {
    return new ArrayList<>(splits.values());
  }

  private void drain() {
    for (Fetched f; (f = queue.poll()) != null; ) {
      if (f.rows() != null) {
        f.rows().close();
      }
    }
  }

  /**
   * Stops the fetchers and frees their buffers and the client, throwing nothing ({@link Release}):
   * Flink closes a failed or cancelled task's reader too, perhaps on an interrupted thread.
   */
  @Override
  public void close() {
    closed = true;
    streams.values().forEach(TicketStream::cancel);
    drain(); // unblocks fetchers waiting to put, which then see closed
    boolean interrupted = stopFetchers();
    drain();
    Release.all(this, this::releaseEmitted, client);
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Interrupts the fetchers and waits for them, interrupted or not: their streams hold buffers of
   * the client's allocator, which must be free before it closes. Returns whether this thread was
   * interrupted.
   */
  private boolean stopFetchers() {
    boolean interrupted = Thread.interrupted();
    long deadline = System.nanoTime() + STOP_NANOS;
    for (Thread t : threads.values()) {
      t.interrupt();
      for (long left; t.isAlive() && (left = deadline - System.nanoTime()) > 0; ) {
        try {
          t.join(Math.max(1, left / 1_000_000));
        } catch (InterruptedException e) {
          interrupted = true;
        }
      }
    }
    return interrupted;
  }
}
