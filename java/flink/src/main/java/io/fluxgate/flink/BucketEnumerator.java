package io.fluxgate.flink;

import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.ScanPlan;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;

/**
 * Plans the scan once (one ticket per bucket) and gives each reader its share of the buckets up
 * front: an unbounded bucket is never finished, so readers cannot ask for the next one.
 */
final class BucketEnumerator implements SplitEnumerator<BucketSplit, List<BucketSplit>> {
  private final SplitEnumeratorContext<BucketSplit> context;
  private final Connection connection;
  private final ScanSpec spec;

  /** Planned or returned splits not assigned yet; null until planned. */
  private List<BucketSplit> pending;

  BucketEnumerator(
      SplitEnumeratorContext<BucketSplit> context,
      Connection connection,
      ScanSpec spec,
      List<BucketSplit> restored) {
    this.context = context;
    this.connection = connection;
    this.spec = spec;
    this.pending = restored;
  }

  @Override
  public void start() {
    if (pending != null) {
      return; // restored: the plan is in the state
    }
    try (FluxgateClient client = connection.connect()) {
      ScanSpec keyed = spec.keyed(client);
      ScanPlan plan =
          keyed.lookupKey() != null ? keyed.planLookup(client) : client.plan(keyed.request());
      pending = new ArrayList<>();
      for (int i = 0; i < plan.tickets().size(); i++) {
        pending.add(new BucketSplit("ticket-" + i, plan.tickets().get(i), keyed.keyColumns()));
      }
    }
  }

  @Override
  public void handleSplitRequest(int subtask, String requesterHostname) {}

  @Override
  public void addSplitsBack(List<BucketSplit> splits, int subtask) {
    pending.addAll(splits); // assigned again when the reader registers again
  }

  @Override
  public void addReader(int subtask) {
    int readers = context.currentParallelism();
    List<BucketSplit> mine = new ArrayList<>();
    List<BucketSplit> rest = new ArrayList<>();
    for (BucketSplit s : pending) {
      int index = Integer.parseInt(s.splitId().substring("ticket-".length()));
      (index % readers == subtask ? mine : rest).add(s);
    }
    pending = rest;
    for (BucketSplit s : mine) {
      context.assignSplit(s, subtask);
    }
    context.signalNoMoreSplits(subtask);
  }

  @Override
  public List<BucketSplit> snapshotState(long checkpointId) {
    return new ArrayList<>(pending);
  }

  @Override
  public void close() {}
}
