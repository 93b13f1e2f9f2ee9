package io.fluxgate.spark;

import io.fluxgate.client.Position;
import io.fluxgate.client.ScanPlan;
import io.fluxgate.client.ScanRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;

/**
 * A table read as micro-batches over per-bucket offsets: each batch reads every bucket from the
 * last batch's end to the high watermark seen when the batch was planned, one input partition per
 * bucket that moved. The offsets are Spark's checkpoint, so a restarted query reads a batch again
 * from exactly the same offsets. A primary-key table streams as t$changelog.
 *
 * <p>A partitioned table's offsets are per partition and bucket ({@link PartitionOffsets}); every
 * batch's planning lists them for the partitions that exist then, so a partition created while the
 * query runs is read from its earliest offset in the next batch.
 */
final class FluxgateMicroBatchStream implements MicroBatchStream {
  private final FluxgateScan scan;
  private final Position startup;

  /**
   * @param startup where a query without a checkpoint starts: {@link Position#EARLIEST}, {@link
   *     Position#LATEST} or a timestamp
   */
  FluxgateMicroBatchStream(FluxgateScan scan, Position startup) {
    this.scan = scan;
    this.startup = startup;
  }

  @Override
  public Offset initialOffset() {
    return offsetsAt(startup);
  }

  @Override
  public Offset latestOffset() {
    return offsetsAt(Position.LATEST);
  }

  private Offset offsetsAt(Position at) {
    String table = scan.table().name();
    if (scan.table().partitioned()) {
      return new PartitionOffsets(
          scan.table().connection().call(c -> c.listPartitionOffsets(table, at, null)));
    }
    return new BucketOffsets(scan.table().connection().call(c -> c.listOffsets(table, at, null)));
  }

  @Override
  public InputPartition[] planInputPartitions(Offset start, Offset end) {
    if (end instanceof PartitionOffsets to) {
      return planPartitions(((PartitionOffsets) start).offsets(), to.offsets());
    }
    Map<Integer, Long> from = ((BucketOffsets) start).offsets();
    Map<Integer, Long> to = ((BucketOffsets) end).offsets();
    List<Integer> moved = new ArrayList<>();
    for (Map.Entry<Integer, Long> e : to.entrySet()) {
      if (e.getValue() > from.getOrDefault(e.getKey(), 0L)) {
        moved.add(e.getKey());
      }
    }
    if (moved.isEmpty()) {
      return new InputPartition[0];
    }
    ScanRequest request =
        scan.request()
            .withStartup(Position.atOffsets(from))
            .withStop(Position.atOffsets(to))
            .withBuckets(moved.toArray(new Integer[0]));
    ScanPlan plan = scan.table().connection().call(c -> c.plan(request));
    return scan.partitions(plan);
  }

  /** Each partition that moved, from where start left it (or its earliest) to end. */
  private InputPartition[] planPartitions(
      Map<String, Map<Integer, Long>> start, Map<String, Map<Integer, Long>> end) {
    Map<String, Map<Integer, Long>> from = new TreeMap<>();
    Map<String, Map<Integer, Long>> to = new TreeMap<>();
    for (Map.Entry<String, Map<Integer, Long>> p : end.entrySet()) {
      Map<Integer, Long> was = start.getOrDefault(p.getKey(), Map.of());
      boolean moved =
          p.getValue().entrySet().stream()
              .anyMatch(b -> b.getValue() > was.getOrDefault(b.getKey(), 0L));
      if (moved) {
        to.put(p.getKey(), p.getValue());
        if (!was.isEmpty()) {
          from.put(p.getKey(), was);
        }
      }
    }
    if (to.isEmpty()) {
      return new InputPartition[0];
    }
    ScanRequest request =
        scan.request()
            .withPartitions(List.copyOf(to.keySet()))
            .withStartup(from.isEmpty() ? Position.EARLIEST : Position.atPartitionOffsets(from))
            .withStop(Position.atPartitionOffsets(to));
    ScanPlan plan = scan.table().connection().call(c -> c.plan(request));
    return scan.partitions(plan);
  }

  @Override
  public PartitionReaderFactory createReaderFactory() {
    return scan.createReaderFactory();
  }

  @Override
  public Offset deserializeOffset(String json) {
    return scan.table().partitioned() ? PartitionOffsets.parse(json) : BucketOffsets.parse(json);
  }

  @Override
  public void commit(Offset end) {}

  @Override
  public void stop() {}
}
