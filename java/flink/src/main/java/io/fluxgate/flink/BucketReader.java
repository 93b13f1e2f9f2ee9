package io.fluxgate.flink;

import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.TicketStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;

/**
 * Reads its buckets, each on its own thread (an unbounded bucket's stream never ends), through a
 * small queue of converted batches. A bucket's split state advances only when its batch has been
 * emitted, so a checkpoint holds exactly what went downstream, also inside a snapshot (see {@link
 * BucketSplit}).
 */
final class BucketReader implements SourceReader<RowData, BucketSplit> {
  private static final int QUEUE_BATCHES = 8;

  /**
   * A converted batch and the split's state once it is emitted, or (rows null) the end of a split,
   * or a failure.
   */
  private record Fetched(String splitId, List<RowData> rows, BucketSplit after, Throwable error) {}

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
  private boolean noMoreSplits;
  private volatile boolean closed;

  BucketReader(Connection connection, ScanSpec spec) {
    this.connection = connection;
    this.spec = spec;
  }

  @Override
  public void start() {
    client = connection.connect();
  }

  @Override
  public void addSplits(List<BucketSplit> added) {
    for (BucketSplit split : added) {
      splits.put(split.splitId(), split);
      Thread t = new Thread(() -> fetch(split), "fluxgate-" + split.splitId());
      t.setDaemon(true);
      threads.put(split.splitId(), t);
      t.start();
    }
  }

  private void fetch(BucketSplit split) {
    Throwable error = null;
    try {
      BucketSplit rest = split;
      if (split.inSnapshot()) {
        long at = readSnapshot(split);
        rest = split.afterSnapshot(at);
        if (rest != null && !closed) {
          put(new Fetched(split.splitId(), List.of(), rest, null));
        }
      }
      if (rest != null) {
        readLog(rest);
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
        if (root.getRowCount() > 0 && split.resumable() && !split.keyColumns().isEmpty()) {
          List<FieldVector> keys = new ArrayList<>();
          split.keyColumns().forEach(k -> keys.add(root.getVector(k)));
          Optional<List<Object>> last = SnapshotKeys.of(keys, root.getRowCount() - 1);
          // A key with no literal cannot cut: such a snapshot starts over when restored.
          after = last.map(k -> split.snapshotEmitted(k, stream.meta().next())).orElse(split);
        }
        put(new Fetched(split.splitId(), convert(root), after, null));
      }
    } finally {
      streams.remove(split.splitId());
    }
    return at;
  }

  /** Emits the log (or changelog, or union) the split reads, recording each batch's next. */
  private void readLog(BucketSplit split) {
    try (TicketStream stream = open(split, split.readTicket())) {
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

  private List<RowData> convert(VectorSchemaRoot root) {
    List<FieldVector> vectors = root.getFieldVectors();
    boolean changelog = spec.changelog();
    int first = changelog ? 1 : 0;
    ArrowRows.Getter[] getters = new ArrowRows.Getter[spec.columns().size() - first];
    for (int i = 0; i < getters.length; i++) {
      getters[i] = ArrowRows.getter(vectors.get(first + i));
    }
    List<RowData> rows = new ArrayList<>(root.getRowCount());
    for (int r = 0; r < root.getRowCount(); r++) {
      GenericRowData row = new GenericRowData(getters.length);
      for (int i = 0; i < getters.length; i++) {
        row.setField(i, getters[i].get(r));
      }
      if (changelog) {
        row.setRowKind(kind(ArrowRows.utf8((VarCharVector) vectors.get(0), r)));
      }
      rows.add(row);
    }
    return rows;
  }

  private static RowKind kind(String changeType) {
    return switch (changeType) {
      case "insert" -> RowKind.INSERT;
      case "update_before" -> RowKind.UPDATE_BEFORE;
      case "update_after" -> RowKind.UPDATE_AFTER;
      case "delete" -> RowKind.DELETE;
      default -> throw new IllegalStateException("unknown _change_type " + changeType);
    };
  }

  private void put(Fetched f) {
    try {
      queue.put(f);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    synchronized (lock) {
      available.complete(null);
    }
  }

  @Override
  public InputStatus pollNext(ReaderOutput<RowData> output) throws Exception {
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
    if (f.rows() == null) {
      splits.remove(f.splitId());
    } else {
      for (RowData row : f.rows()) {
        output.collect(row);
      }
      splits.put(f.splitId(), f.after());
    }
    return InputStatus.MORE_AVAILABLE;
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

  @Override
  public void close() throws Exception {
    closed = true;
    streams.values().forEach(TicketStream::cancel);
    queue.clear(); // unblocks fetchers waiting to put, which then see closed
    for (Thread t : threads.values()) {
      t.interrupt();
      t.join(10_000);
    }
    if (client != null) {
      client.close();
    }
  }
}
