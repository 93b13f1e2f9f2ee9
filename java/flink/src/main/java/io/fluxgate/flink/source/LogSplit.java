package io.fluxgate.flink.source;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;

/** A bucket's log (or changelog) from an offset on; after a snapshot, each cut's keys from its. */
public final class LogSplit extends BucketSplit {
  LogSplit(String id, byte[] ticket, List<String> keyColumns, List<Cut> cuts) {
    super(id, ticket, keyColumns, cuts);
  }

  @Override
  byte[] readTicket() {
    return filtered(json(), cutsFilter());
  }

  /** This split from next on: the log after the batches already emitted. */
  LogSplit resumeAt(long next) {
    ObjectNode t = json();
    t.put("start", next);
    return (LogSplit) with(t, cutsFrom(cuts(), next));
  }
}
