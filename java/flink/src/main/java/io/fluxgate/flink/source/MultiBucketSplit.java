package io.fluxgate.flink.source;

import java.util.List;

/**
 * A limited scan's ticket, which reads several buckets in turn ("then"): it has no one offset to
 * record, so it is read whole or again from the start.
 */
public final class MultiBucketSplit extends BucketSplit {
  MultiBucketSplit(String id, byte[] ticket, List<String> keyColumns, List<Cut> cuts) {
    super(id, ticket, keyColumns, cuts);
  }

  @Override
  byte[] readTicket() {
    return ticket();
  }
}
