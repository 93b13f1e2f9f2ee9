package io.fluxgate.flink.source;

import java.util.Set;
import org.apache.flink.connector.base.source.reader.RecordsWithSplitIds;

/**
 * What one fetch of a split hands the reader: a batch of rows (perhaps none) with the split's state
 * once they are emitted, which is the fetch's one record; or the split's end; or nothing. The
 * reader emits a batch whole, so a checkpoint falls between batches and holds what went downstream.
 */
public final class SplitFetch implements RecordsWithSplitIds<SplitFetch> {
  private static final SplitFetch NOTHING = new SplitFetch(null, null, null);

  private final String splitId;
  private final ColumnarBatch rows;
  private final BucketSplit after;
  private boolean splitTaken;
  private boolean recordTaken;

  private SplitFetch(String splitId, ColumnarBatch rows, BucketSplit after) {
    this.splitId = splitId;
    this.rows = rows;
    this.after = after;
  }

  /** rows (null: none) of the split, which is after once they are emitted. */
  static SplitFetch batch(ColumnarBatch rows, BucketSplit after) {
    return new SplitFetch(after.splitId(), rows, after);
  }

  static SplitFetch end(String splitId) {
    return new SplitFetch(splitId, null, null);
  }

  static SplitFetch nothing() {
    return NOTHING;
  }

  /** The rows, null for none. */
  ColumnarBatch rows() {
    return rows;
  }

  /** The split once the rows are emitted. */
  BucketSplit after() {
    return after;
  }

  @Override
  public String nextSplit() {
    if (after == null || splitTaken) {
      return null;
    }
    splitTaken = true;
    return splitId;
  }

  @Override
  public SplitFetch nextRecordFromSplit() {
    if (recordTaken) {
      return null;
    }
    recordTaken = true;
    return this;
  }

  @Override
  public Set<String> finishedSplits() {
    return after == null && splitId != null ? Set.of(splitId) : Set.of();
  }

  /** Frees the rows: the reader calls this once it has moved past them. */
  @Override
  public void recycle() {
    if (rows != null) {
      rows.close();
    }
  }
}
