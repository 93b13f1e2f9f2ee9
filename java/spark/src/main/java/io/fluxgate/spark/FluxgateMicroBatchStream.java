package io.fluxgate.spark;

import io.fluxgate.client.FluxgateException;
import io.fluxgate.client.Position;
import io.fluxgate.client.ScanPlan;
import io.fluxgate.client.ScanRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A table read as micro-batches over per-bucket offsets: each batch reads every bucket from the
 * last batch's end to the high watermark seen when the batch was planned, one input partition per
 * bucket that moved. The offsets are Spark's checkpoint, so a restarted query reads a batch again
 * from exactly the same offsets. A primary-key table streams as t$changelog.
 *
 * <p>A partitioned table's offsets are per partition and bucket ({@link PartitionOffsets}); every
 * batch's planning lists them for the partitions that exist then, so a partition created while the
 * query runs is read from its earliest offset in the next batch, and a dropped one leaves the
 * offsets (its rows are gone). A partition is known by its id: one created again under a dropped
 * one's name is new, read from its earliest offset.
 */
final class FluxgateMicroBatchStream implements MicroBatchStream {
  private static final Logger LOG = LoggerFactory.getLogger(FluxgateMicroBatchStream.class);

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
      return scan.table().connection().call(c -> PartitionOffsets.list(c, table, at));
    }
    return new BucketOffsets(scan.table().connection().call(c -> c.listOffsets(table, at, null)));
  }

  @Override
  public InputPartition[] planInputPartitions(Offset start, Offset end) {
    if (end instanceof PartitionOffsets to) {
      return planPartitions((PartitionOffsets) start, to);
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

  /**
   * Each partition of end that moved, from where start left it to end; from its earliest offset
   * when start does not have it under the same id (new, or created again after a drop). A partition
   * dropped since end was listed is left out with a warning, as Fluss's source removes a dropped
   * partition's splits: its rows are gone, and the others go on. Planning again from the same
   * offsets after a restart leaves out the same ones, or more if more were dropped meanwhile.
   */
  private InputPartition[] planPartitions(PartitionOffsets start, PartitionOffsets end) {
    Map<String, PartitionOffsets.Place> moved = new TreeMap<>();
    for (Map.Entry<String, PartitionOffsets.Place> p : end.places().entrySet()) {
      Map<Integer, Long> was = from(start, p);
      if (p.getValue().buckets().entrySet().stream()
          .anyMatch(b -> b.getValue() > was.getOrDefault(b.getKey(), 0L))) {
        moved.put(p.getKey(), p.getValue());
      }
    }
    while (!moved.isEmpty()) {
      ScanRequest request = partitionsRequest(start, moved);
      ScanPlan plan;
      try {
        plan = scan.table().connection().call(c -> c.plan(request));
      } catch (FluxgateException e) { // NOT_FOUND, or OUT_OF_RANGE of one created again
        Set<String> gone = dropped(moved, liveIds(e));
        if (gone.isEmpty()) {
          throw e;
        }
        leaveOut(moved, gone);
        continue;
      }
      Map<String, Long> planned = PartitionOffsets.ids(plan.meta().partitions());
      Set<String> replaced = dropped(moved, planned);
      replaced.retainAll(planned.keySet()); // those absent were pruned by the filter
      if (replaced.isEmpty()) {
        return scan.partitions(plan);
      }
      leaveOut(moved, replaced); // created again since end was listed: not end's partition
    }
    return new InputPartition[0];
  }

  /** Where start left a partition of end: nothing (its earliest) unless under the same id. */
  private static Map<Integer, Long> from(
      PartitionOffsets start, Map.Entry<String, PartitionOffsets.Place> p) {
    PartitionOffsets.Place was = start.places().get(p.getKey());
    return was != null && was.id() == p.getValue().id() ? was.buckets() : Map.of();
  }

  /** The scan of the moved partitions, each from where start left it to its end offsets. */
  private ScanRequest partitionsRequest(
      PartitionOffsets start, Map<String, PartitionOffsets.Place> moved) {
    Map<String, Map<Integer, Long>> from = new TreeMap<>();
    Map<String, Map<Integer, Long>> to = new TreeMap<>();
    for (Map.Entry<String, PartitionOffsets.Place> p : moved.entrySet()) {
      Map<Integer, Long> was = from(start, p);
      if (!was.isEmpty()) {
        from.put(p.getKey(), was);
      }
      to.put(p.getKey(), p.getValue().buckets());
    }
    return scan.request()
        .withPartitions(List.copyOf(to.keySet()))
        .withStartup(from.isEmpty() ? Position.EARLIEST : Position.atPartitionOffsets(from))
        .withStop(Position.atPartitionOffsets(to));
  }

  /** The ids of the partitions now, or planFailure if they cannot be listed. */
  private Map<String, Long> liveIds(FluxgateException planFailure) {
    try {
      return scan.table()
          .connection()
          .call(c -> PartitionOffsets.ids(c.listPartitions(scan.table().name())));
    } catch (FluxgateException e) {
      planFailure.addSuppressed(e);
      throw planFailure;
    }
  }

  /** The partitions of places that ids does not show under the same id. */
  private static Set<String> dropped(
      Map<String, PartitionOffsets.Place> places, Map<String, Long> ids) {
    Set<String> out = new TreeSet<>();
    places.forEach(
        (name, place) -> {
          if (!Long.valueOf(place.id()).equals(ids.get(name))) {
            out.add(name);
          }
        });
    return out;
  }

  private void leaveOut(Map<String, PartitionOffsets.Place> moved, Set<String> dropped) {
    LOG.warn(
        "fluxgate: partitions {} of {} were dropped after the batch was listed; the stream goes on"
            + " without their rows",
        dropped,
        scan.table().name());
    moved.keySet().removeAll(dropped);
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
