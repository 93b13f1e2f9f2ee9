package io.fluxgate.flink.source;

import io.fluxgate.client.ConnectionSettings;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.FluxgateException;
import io.fluxgate.client.PartitionInfo;
import io.fluxgate.client.Position;
import io.fluxgate.client.ScanPlan;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Plans the scan (one ticket per bucket, per partition of a partitioned table) and gives each
 * reader its share of the buckets up front: an unbounded bucket is never finished, so readers
 * cannot ask for the next one.
 *
 * <p>A streaming read of a partitioned table also looks for new partitions every
 * scan.partition.discovery.interval, as Fluss's enumerator does, and reads each from its earliest
 * offset; its readers are never told that no more splits come.
 */
public final class BucketEnumerator implements SplitEnumerator<BucketSplit, EnumeratorState> {
  private static final Logger LOG = LoggerFactory.getLogger(BucketEnumerator.class);
  private static final String PREFIX = "ticket-";

  private final SplitEnumeratorContext<BucketSplit> context;
  private final ConnectionSettings connection;
  private final ScanSpec spec;

  /** Planned or returned splits not assigned yet; null until planned. */
  private List<BucketSplit> pending;

  private final Set<Long> partitions;
  private int nextSplit;

  /** Discovery's client, open while the enumerator runs; null without discovery. */
  private FluxgateClient client;

  BucketEnumerator(
      SplitEnumeratorContext<BucketSplit> context,
      ConnectionSettings connection,
      ScanSpec spec,
      EnumeratorState restored) {
    this.context = context;
    this.connection = connection;
    this.spec = spec;
    this.pending = restored == null ? null : new ArrayList<>(restored.pending());
    this.partitions = restored == null ? new HashSet<>() : new HashSet<>(restored.partitions());
    this.nextSplit = restored == null ? 0 : restored.nextSplit();
  }

  @Override
  public void start() {
    if (pending == null) {
      try (FluxgateClient planner = connection.connect()) {
        ScanSpec keyed = spec.keyed(planner);
        ScanPlan plan =
            keyed.lookupKey() != null ? keyed.planLookup(planner) : planner.plan(keyed.request());
        pending = new ArrayList<>(splits(plan, keyed.keyColumns()));
      }
    }
    if (spec.discovers()) {
      client = connection.connect();
      context.callAsync(
          () -> client.listPartitions(spec.baseTable()),
          this::discovered,
          spec.discoveryMillis(),
          spec.discoveryMillis());
    }
  }

  /** plan's tickets as splits, its partitions known from now on. */
  private List<BucketSplit> splits(ScanPlan plan, List<String> keyColumns) {
    if (plan.meta() != null) {
      plan.meta().partitions().forEach(p -> partitions.add(p.partitionId()));
    }
    List<BucketSplit> out = new ArrayList<>();
    for (byte[] ticket : plan.tickets()) {
      out.add(BucketSplit.of(PREFIX + nextSplit++, ticket, keyColumns));
    }
    return out;
  }

  /**
   * In the coordinator thread, with the partitions listed now: plans the new ones from their
   * earliest offsets and assigns their splits. A failed listing is retried at the next interval.
   */
  private void discovered(List<PartitionInfo> listed, Throwable error) {
    if (error != null) {
      LOG.warn("fluxgate: listing the partitions of {} failed", spec.table(), error);
      return;
    }
    List<String> names = new ArrayList<>();
    List<Long> ids = new ArrayList<>();
    for (PartitionInfo p : listed) {
      if (!partitions.contains(p.partitionId())) {
        names.add(p.partitionName());
        ids.add(p.partitionId());
      }
    }
    if (names.isEmpty()) {
      return;
    }
    ScanSpec keyed = spec.keyed(client);
    ScanPlan plan;
    try {
      plan = client.plan(keyed.request().withStartup(Position.EARLIEST).withPartitions(names));
    } catch (FluxgateException e) { // e.g. one was dropped since: all are listed again next time
      LOG.warn("fluxgate: planning new partitions {} of {} failed", names, spec.table(), e);
      return;
    }
    List<BucketSplit> added = splits(plan, keyed.keyColumns());
    partitions.addAll(ids); // also those the filter prunes: planned once
    LOG.info("fluxgate: {} new partitions of {}: {}", names.size(), spec.table(), names);
    pending.addAll(added);
    context.registeredReaders().keySet().forEach(this::assignPending);
  }

  @Override
  public void handleSplitRequest(int subtask, String requesterHostname) {}

  @Override
  public void addSplitsBack(List<BucketSplit> splits, int subtask) {
    pending.addAll(splits); // assigned again when the reader registers again
  }

  @Override
  public void addReader(int subtask) {
    assignPending(subtask);
    if (!spec.discovers()) {
      context.signalNoMoreSplits(subtask);
    }
  }

  /** Assigns the pending splits that belong to subtask. */
  private void assignPending(int subtask) {
    int readers = context.currentParallelism();
    List<BucketSplit> rest = new ArrayList<>();
    for (BucketSplit s : pending) {
      int index = Integer.parseInt(s.splitId().substring(PREFIX.length()));
      if (index % readers == subtask) {
        context.assignSplit(s, subtask);
      } else {
        rest.add(s);
      }
    }
    pending = rest;
  }

  @Override
  public EnumeratorState snapshotState(long checkpointId) {
    return new EnumeratorState(new ArrayList<>(pending), Set.copyOf(partitions), nextSplit);
  }

  @Override
  public void close() {
    if (client != null) {
      client.close();
    }
  }
}
