package io.fluxgate.flink.source;

import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.FluxgateException;
import io.fluxgate.client.TicketStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.connector.base.source.reader.splitreader.SplitReader;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsAddition;
import org.apache.flink.connector.base.source.reader.splitreader.SplitsChange;

/**
 * Reads one split on its fetcher's thread (see {@link FetcherPerSplit}), a batch per fetch: a
 * snapshot split's snapshot and then, if the split goes on, its changelog; any other split's ticket
 * as it is. Each batch comes with the split's state once it is emitted. Only a shutting-down
 * fetcher wakes a fetch up (a split is added before its fetcher starts and never paused), so a
 * {@link MultiBucketSplit}, which has no state to resume from, is never read twice.
 */
public final class BucketSplitReader implements SplitReader<SplitFetch, BucketSplit> {
  private final FluxgateClient client;
  private final ScanSpec spec;
  private final Set<ColumnarBatch> live;

  /** What the open stream reads: the split as it was when the stream was opened. */
  private BucketSplit phase;

  /** The split once the batches fetched so far are emitted. */
  private BucketSplit current;

  /** The offset the snapshot being read was taken at, -1 before its first batch. */
  private long snapshotAt = -1;

  private TicketStream stream;
  private boolean wokenUp;

  BucketSplitReader(FluxgateClient client, ScanSpec spec, Set<ColumnarBatch> live) {
    this.client = client;
    this.spec = spec;
    this.live = live;
  }

  @Override
  public void handleSplitsChanges(SplitsChange<BucketSplit> change) {
    if (!(change instanceof SplitsAddition) || current != null || change.splits().size() != 1) {
      throw new IllegalArgumentException("a fluxgate split reader reads one split: " + change);
    }
    current = change.splits().get(0);
    phase = current;
  }

  @Override
  public SplitFetch fetch() {
    if (current == null || takeWakeUp()) {
      return SplitFetch.nothing();
    }
    try {
      TicketStream s = open();
      if (s == null) {
        return SplitFetch.nothing(); // woken up while opening
      }
      return s.next() ? emitted(s) : ended();
    } catch (FluxgateException.NotFound e) {
      closeStream();
      // A partition dropped while it was read (by hand, or expired): its split is over, as in
      // Fluss.
      if (client.partitionDropped(current.ticket())) {
        return SplitFetch.end(current.splitId());
      }
      throw e;
    } catch (RuntimeException e) {
      closeStream();
      if (takeWakeUp()) {
        return SplitFetch.nothing(); // the next fetch reads on from current
      }
      throw e;
    }
  }

  /** The batch just read, as rows and the split's state once they are emitted. */
  private SplitFetch emitted(TicketStream s) {
    VectorSchemaRoot root = s.root();
    if (phase instanceof SnapshotSplit snapshot) {
      snapshotAt = s.meta().next(); // every snapshot batch carries the snapshot's offset
      if (root.getRowCount() > 0 && !phase.keyColumns().isEmpty()) {
        List<FieldVector> keys = new ArrayList<>();
        phase.keyColumns().forEach(k -> keys.add(root.getVector(k)));
        current =
            snapshot.snapshotEmitted(SnapshotKeys.of(keys, root.getRowCount() - 1), snapshotAt);
      }
    } else if (phase instanceof LogSplit log) {
      current = log.resumeAt(s.meta().next());
    } else if (phase instanceof LakeSplit lake) {
      current = lake.resumeAt(s.meta().next());
    } // a MultiBucketSplit is read whole: its state stays
    int fields = spec.columns().size() - (spec.changelog() ? 1 : 0); // columns has _change_type
    ColumnarBatch rows =
        new ColumnarBatch(
            root, spec.leadingColumns(), fields, spec.changelog(), client.allocator(), live);
    return SplitFetch.batch(rows, current);
  }

  /** The stream is over: a snapshot's changelog follows, if the split goes on; else the end. */
  private SplitFetch ended() {
    closeStream();
    if (phase instanceof SnapshotSplit snapshot) {
      BucketSplit rest = snapshot.afterSnapshot(snapshotAt);
      if (rest != null) {
        phase = rest;
        current = rest;
        return SplitFetch.batch(null, rest);
      }
    }
    return SplitFetch.end(current.splitId());
  }

  /**
   * The open stream, or one opened now on current, which a reopening after a wake-up resumes from;
   * null once woken up.
   */
  private synchronized TicketStream open() {
    if (stream == null && !wokenUp) {
      if (current != phase) {
        phase = current;
        snapshotAt = -1;
      }
      stream = client.read(phase.readTicket());
    }
    return wokenUp ? null : stream;
  }

  private synchronized boolean takeWakeUp() {
    boolean was = wokenUp;
    wokenUp = false;
    return was;
  }

  /**
   * Ends a fetch blocked on the stream (a shutting-down fetcher). The fetch returns nothing, and a
   * later one opens the split again where it is.
   */
  @Override
  public synchronized void wakeUp() {
    wokenUp = true;
    if (stream != null) {
      stream.cancel();
    }
  }

  private synchronized void closeStream() {
    if (stream != null) {
      stream.close();
      stream = null;
    }
  }

  @Override
  public void close() {
    closeStream();
  }
}
