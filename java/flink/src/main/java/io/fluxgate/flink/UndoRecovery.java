package io.fluxgate.flink;

import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.Position;
import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Undo recovery of one sink subtask before it writes (Fluss's UndoRecoveryOperator, FIP-21): the
 * buckets it owns go back to their offsets at the restored checkpoint, or, on a start without
 * state, to the offsets registered under the producer id when the first attempt started.
 *
 * <p>Coordination across subtasks: rows are shuffled by bucket (aggregation tables only allow AUTO
 * and BUCKET distribution), so subtask i is the only writer of the buckets b with b % parallelism
 * == i, and it undoes exactly those before writing anything; the others write their own buckets
 * meanwhile, which the server's undo leaves alone. No subtask waits for another, but on a start
 * without state, when subtask 0 registers the table's latest offsets (create-if-absent: a retry
 * gets the first attempt's) and every subtask reads them back.
 */
final class UndoRecovery {
  private static final Duration REGISTER_WAIT = Duration.ofMinutes(5);
  private static final long POLL_MS = 100;

  private UndoRecovery() {}

  /**
   * Undoes the subtask's buckets and returns their log end offsets after the undo: the offsets the
   * next checkpoint starts from.
   */
  static Map<Integer, Long> recover(
      FluxgateClient client,
      String table,
      String producerId,
      int subtask,
      int parallelism,
      int buckets,
      Collection<SinkState> restored)
      throws InterruptedException {
    Map<Integer, Long> baseline = new HashMap<>();
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
        baseline.putAll(s.offsets());
      }
    } else {
      if (subtask == 0) {
        client.registerProducerOffsets(
            producerId, table, client.listOffsets(table, Position.LATEST, null));
      }
      baseline.putAll(registered(client, producerId, table));
    }
    Map<Integer, Long> owned = new HashMap<>();
    for (int b = subtask; b < buckets; b += parallelism) {
      Long offset = baseline.get(b);
      if (offset == null) {
        throw new IllegalStateException(
            "no offset of bucket " + b + " of " + table + " to undo back to");
      }
      owned.put(b, offset);
    }
    if (owned.isEmpty()) {
      return owned;
    }
    return new HashMap<>(client.undo(table, owned).offsets());
  }

  /** Waits for subtask 0's registration. */
  private static Map<Integer, Long> registered(
      FluxgateClient client, String producerId, String table) throws InterruptedException {
    long deadline = System.nanoTime() + REGISTER_WAIT.toNanos();
    while (true) {
      Optional<Map<Integer, Long>> offsets = client.producerOffsets(producerId, table);
      if (offsets.isPresent()) {
        return offsets.get();
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            "subtask 0 of the fluxgate sink of "
                + table
                + " registered no producer offsets under "
                + producerId
                + " within "
                + REGISTER_WAIT);
      }
      Thread.sleep(POLL_MS);
    }
  }
}
