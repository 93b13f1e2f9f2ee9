package io.fluxgate.flink.source;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/**
 * A bucket whose read begins with a snapshot of its rows (a primary-key table's "full" read, or its
 * snapshot view), recording after each batch the key of its last row (see {@link BucketSplit}).
 */
public final class SnapshotSplit extends BucketSplit {
  SnapshotSplit(String id, byte[] ticket, List<String> keyColumns, List<Cut> cuts) {
    super(id, ticket, keyColumns, cuts);
  }

  /** The snapshot alone (a changelog ticket ends after it with stop 0), above the last cut. */
  @Override
  byte[] readTicket() {
    ObjectNode t = json();
    if (t.path("snapshot").asBoolean(false)) {
      t.put("start", 0);
      t.put("stop", 0);
    }
    List<Cut> cuts = cuts();
    return filtered(
        t,
        cuts.isEmpty() ? null : SnapshotKeys.above(keyColumns(), cuts.get(cuts.size() - 1).key()));
  }

  /** This split after the snapshot's rows up to key were emitted; the snapshot is at offset. */
  SnapshotSplit snapshotEmitted(List<Object> key, long offset) {
    List<Cut> next = new ArrayList<>(cuts());
    next.add(new Cut(key, offset));
    return new SnapshotSplit(splitId(), ticket(), keyColumns(), next);
  }

  /**
   * This split once its snapshot (taken at offset) was emitted whole: the changelog from the
   * earliest cut, or null when nothing follows (a plain snapshot, or the stop is reached).
   */
  BucketSplit afterSnapshot(long offset) {
    ObjectNode t = json();
    if (t.path("view").asText().equals("snapshot")) {
      return null;
    }
    t.put("snapshot", false);
    List<Cut> next = new ArrayList<>();
    long start = offset;
    if (!cuts().isEmpty()) {
      next.addAll(cuts());
      next.add(new Cut(null, offset));
      start = cuts().stream().mapToLong(Cut::offset).min().getAsLong();
    }
    if (t.hasNonNull("stop") && start >= t.get("stop").asLong()) {
      return null;
    }
    t.put("start", start);
    return with(t, cutsFrom(next, start));
  }
}
