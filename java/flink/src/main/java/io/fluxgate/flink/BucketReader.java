package io.fluxgate.flink;

import io.fluxgate.client.BatchMeta;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.TicketStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
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
 * small queue of converted batches. A bucket's offset advances only when its batch has been
 * emitted, so a checkpoint holds exactly what went downstream.
 */
final class BucketReader implements SourceReader<RowData, BucketSplit> {
  private static final int QUEUE_BATCHES = 8;

  /** A converted batch, or (rows null) the end of a split, or a failure. */
  private record Fetched(
      String splitId, List<RowData> rows, long next, boolean pastSnapshot, Throwable error) {}

  private final Connection connection;
  private final boolean changelog;
  private final BlockingQueue<Fetched> queue = new ArrayBlockingQueue<>(QUEUE_BATCHES);
  private final Object lock = new Object();
  private CompletableFuture<Void> available = new CompletableFuture<>();

  /** The splits being read, as a checkpoint would store them now. */
  private final Map<String, BucketSplit> splits = new HashMap<>();

  private final Map<String, Thread> threads = new HashMap<>();
  private final Map<String, TicketStream> streams = new java.util.concurrent.ConcurrentHashMap<>();
  private FluxgateClient client;
  private boolean noMoreSplits;
  private volatile boolean closed;

  BucketReader(Connection connection, boolean changelog) {
    this.connection = connection;
    this.changelog = changelog;
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
    try (TicketStream stream = client.read(split.ticket())) {
      streams.put(split.splitId(), stream);
      boolean snapshot = split.startsWithSnapshot();
      long snapshotOffset = -1;
      while (!closed && stream.next()) {
        BatchMeta meta = stream.meta();
        if (snapshot && snapshotOffset < 0) {
          snapshotOffset = meta.next(); // every snapshot batch carries the snapshot's offset
        }
        // Past the snapshot once the offset moves: changelog batches each take offsets.
        boolean pastSnapshot = !snapshot || meta.next() > snapshotOffset;
        put(new Fetched(split.splitId(), convert(stream.root()), meta.next(), pastSnapshot, null));
      }
    } catch (Throwable t) {
      error = t;
    } finally {
      streams.remove(split.splitId());
    }
    // Only now, with the stream's buffers freed: the reader may close the client once it is told.
    if (!closed) {
      put(new Fetched(split.splitId(), null, -1, false, error));
    }
  }

  private List<RowData> convert(VectorSchemaRoot root) {
    List<FieldVector> vectors = root.getFieldVectors();
    int first = changelog ? 1 : 0;
    ArrowRows.Getter[] getters = new ArrowRows.Getter[vectors.size() - first];
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
      BucketSplit split = splits.get(f.splitId());
      if (f.pastSnapshot() && split.resumable()) {
        splits.put(f.splitId(), split.resumeAt(f.next()));
      }
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
