package io.fluxgate.flink.source;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The enumerator's checkpoint: what it planned survives a restore, also from an older version. */
public class EnumeratorStateTest {
  private static BucketSplit split(int n, String partition) {
    String ticket =
        "{\"v\":1,\"table\":\"fluss.t\",\"partition_id\":7,\"partition\":\""
            + partition
            + "\",\"bucket\":0,\"start\":3,\"stop\":null}";
    return BucketSplit.of("ticket-" + n, ticket.getBytes(StandardCharsets.UTF_8), List.of());
  }

  @Test
  void pendingSplitsPlannedPartitionsAndTheNextSplitNumberRoundTrip() throws Exception {
    EnumeratorState state = new EnumeratorState(List.of(split(4, "20261202")), Set.of(7L, 9L), 6);
    EnumeratorState back =
        BucketSplitSerializer.ENUMERATOR.deserialize(
            BucketSplitSerializer.ENUMERATOR.getVersion(),
            BucketSplitSerializer.ENUMERATOR.serialize(state));
    assertEquals(Set.of(7L, 9L), back.partitions());
    assertEquals(6, back.nextSplit());
    assertEquals(1, back.pending().size());
    assertEquals("ticket-4", back.pending().get(0).splitId());
    assertArrayEquals(split(4, "20261202").ticket(), back.pending().get(0).ticket());
  }

  @Test
  void aVersion2CheckpointIsItsPendingSplitsWithNumbersAfterThem() throws Exception {
    // Version 2 held the unassigned splits alone, as the split serializer writes a list of them.
    byte[] v2 = BucketSplitSerializer.SPLIT.serialize(split(3, "x"));
    EnumeratorState back = BucketSplitSerializer.ENUMERATOR.deserialize(2, v2);
    assertEquals(List.of("ticket-3"), back.pending().stream().map(BucketSplit::splitId).toList());
    assertEquals(Set.of(), back.partitions());
    assertEquals(4, back.nextSplit());
  }
}
