package io.fluxgate.flink.sink;

import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.PartitionInfo;
import io.fluxgate.client.Position;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;

/**
 * Undo recovery of one sink subtask before it writes (Fluss's UndoRecoveryOperator, FIP-21): the
 * buckets it owns go back to their offsets at the restored checkpoint, or, on a start without
 * state, to the offsets registered under the producer id when the first attempt started.
 *
 * <p>Coordination across subtasks: rows are shuffled by bucket (aggregation tables only allow AUTO
 * and BUCKET distribution), so subtask i is the only writer of the buckets b with b % parallelism
 * == i, in every partition, and it undoes exactly those before writing anything; the others write
 * their own buckets meanwhile, which the server's undo leaves alone. On a start without state every
 * subtask registers the table's latest offsets, create-if-absent, before it writes: the first
 * registration of the first attempt wins, which no subtask had written before, and every subtask
 * undoes back to it. No subtask waits for another.
 *
 * <p>Offsets are kept per partition name, then bucket; a table without partitions is the one
 * partition {@link SinkState#UNPARTITIONED}. A partition that exists now but not at the baseline
 * was created since, so its owned buckets go back to offset 0; one dropped since is left out.
 */
public final class UndoRecovery {
  private UndoRecovery() {}

  /**
   * Undoes the subtask's buckets and returns their log end offsets after the undo, per partition:
   * the offsets the next checkpoint starts from.
   */
  static Map<String, Map<Integer, Long>> recover(
      FluxgateClient client,
      String table,
      boolean partitioned,
      String producerId,
      int subtask,
      int parallelism,
      int buckets,
      Collection<SinkState> restored) {
    Map<String, Map<Integer, Long>> baseline = new HashMap<>();
    if (!restored.isEmpty()) {
      for (SinkState s : restored) {
        if (s.parallelism() != parallelism) {
          // The buckets a subtask owns follow from the parallelism.
          throw new IllegalStateException(
              "the fluxgate sink of "
                  + table
                  + " was checkpointed with parallelism "
                  + s.parallelism()
                  + " and cannot undo with "
                  + parallelism
                  + "; restore it with "
                  + s.parallelism());
        }
        s.offsets().forEach((p, o) -> baseline.computeIfAbsent(p, k -> new HashMap<>()).putAll(o));
      }
    } else {
      baseline.putAll(registered(client, table, partitioned, producerId));
    }
    if (partitioned) {
      Map<String, Map<Integer, Long>> now = new HashMap<>();
      for (PartitionInfo p : client.listPartitions(table)) {
        now.put(p.partitionName(), baseline.getOrDefault(p.partitionName(), Map.of()));
      }
      baseline.clear();
      baseline.putAll(now);
    }
    Map<String, Map<Integer, Long>> owned = new HashMap<>();
    baseline.forEach(
        (partition, offsets) -> {
          for (int b = subtask; b < buckets; b += parallelism) {
            Long offset = offsets.get(b);
            if (offset == null && !partitioned) {
              throw new IllegalStateException(
                  "no offset of bucket " + b + " of " + table + " to undo back to");
            }
            // A partition's bucket without one is of a partition created since.
            owned
                .computeIfAbsent(partition, k -> new HashMap<>())
                .put(b, offset == null ? 0 : offset);
          }
        });
    if (owned.isEmpty()) {
      return owned;
    }
    if (partitioned) {
      return SinkState.copy(client.undoPartitions(table, owned).partitionOffsets());
    }
    return SinkState.copy(
        Map.of(
            SinkState.UNPARTITIONED,
            client.undo(table, owned.get(SinkState.UNPARTITIONED)).offsets()));
  }

  /** Registers the table's latest offsets unless registered already, and returns the registered. */
  private static Map<String, Map<Integer, Long>> registered(
      FluxgateClient client, String table, boolean partitioned, String producerId) {
    if (partitioned) {
      client.registerProducerPartitionOffsets(
          producerId, table, client.listPartitionOffsets(table, Position.LATEST, null));
      // Nothing back: the registration named no partition (the table had none then).
      return client.producerPartitionOffsets(producerId, table).orElse(Map.of());
    }
    client.registerProducerOffsets(
        producerId, table, client.listOffsets(table, Position.LATEST, null));
    Map<Integer, Long> offsets =
        client
            .producerOffsets(producerId, table)
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "the producer offsets of " + table + " under " + producerId + " are gone"));
    return Map.of(SinkState.UNPARTITIONED, offsets);
  }
}
