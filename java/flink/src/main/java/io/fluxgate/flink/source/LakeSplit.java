package io.fluxgate.flink.source;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/**
 * A bucket's rows in the lake ("lake"), or those and then its log after them ("union"): a batch's
 * next is a lake row position while below the ticket's start, a log offset after.
 */
public final class LakeSplit extends BucketSplit {
  LakeSplit(String id, byte[] ticket, List<String> keyColumns, List<Cut> cuts) {
    super(id, ticket, keyColumns, cuts);
  }

  @Override
  byte[] readTicket() {
    return filtered(json(), cutsFilter());
  }

  /**
   * This split from next on: in the lake part, the lake rows from next on; past it, the log from
   * next on (a {@link LogSplit}).
   */
  BucketSplit resumeAt(long next) {
    ObjectNode t = json();
    if (t.path("view").asText().equals("lake") || next < t.path("start").asLong()) {
      t.put("lake_start", next);
    } else {
      t.put("view", "log"); // the lake part is done
      t.remove("lake_snapshot_id");
      t.remove("lake_start");
      t.put("start", next);
    }
    return with(t, cutsFrom(cuts(), next));
  }
}
