package io.fluxgate.flink.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.apache.flink.api.connector.source.ReaderInfo;
import org.apache.flink.api.connector.source.SplitsAssignment;
import org.apache.flink.api.connector.source.mocks.MockSplitEnumeratorContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The enumerator on Flink's mock context against {@link FakeFlightServer}: each reader's share of
 * the buckets, splits given back, its checkpoint, and the discovery of new partitions.
 */
@Timeout(60)
public class SourceEnumeratorTest {
  private static ScanSpec spec(boolean partitioned, boolean bounded, long discoveryMillis) {
    return new ScanSpec(
        FakeFlightServer.TABLE,
        List.of("id"),
        null,
        "latest", // discovery reads a new partition from its earliest offset all the same
        null,
        bounded,
        null,
        false,
        List.of(),
        null,
        partitioned,
        null,
        discoveryMillis);
  }

  /** The split ids each reader was assigned, by reader. */
  private static Map<Integer, List<String>> assigned(MockSplitEnumeratorContext<BucketSplit> c) {
    Map<Integer, List<String>> out = new TreeMap<>();
    for (SplitsAssignment<BucketSplit> a : c.getSplitsAssignmentSequence()) {
      a.assignment()
          .forEach(
              (reader, splits) ->
                  splits.forEach(
                      s -> out.computeIfAbsent(reader, r -> new ArrayList<>()).add(s.splitId())));
    }
    return out;
  }

  private static void addReader(
      MockSplitEnumeratorContext<BucketSplit> context, BucketEnumerator e, int subtask) {
    context.registerReader(new ReaderInfo(subtask, "localhost"));
    e.addReader(subtask);
  }

  @Test
  void eachReaderGetsSplitNumbersOfItsIndexAndABoundedReadEnds() throws Exception {
    try (FakeFlightServer server = new FakeFlightServer(4);
        MockSplitEnumeratorContext<BucketSplit> context = new MockSplitEnumeratorContext<>(2);
        BucketEnumerator e =
            new BucketEnumerator(context, server.connection(), spec(false, true, 0), null)) {
      server.append("", 0, 0, 1, 2);
      e.start();
      addReader(context, e, 0);
      addReader(context, e, 1);
      assertEquals(
          Map.of(0, List.of("ticket-0", "ticket-2"), 1, List.of("ticket-1", "ticket-3")),
          assigned(context));
      assertTrue(context.hasNoMoreSplits(0) && context.hasNoMoreSplits(1), "no more splits");
      assertEquals(List.of(), e.snapshotState(1).pending());
    }
  }

  @Test
  void splitsGivenBackGoToTheirReaderWhenItRegistersAgain() throws Exception {
    try (FakeFlightServer server = new FakeFlightServer(2);
        MockSplitEnumeratorContext<BucketSplit> context = new MockSplitEnumeratorContext<>(2);
        BucketEnumerator e =
            new BucketEnumerator(context, server.connection(), spec(false, false, 0), null)) {
      server.append("", 0, 0, 1);
      e.start();
      addReader(context, e, 0);
      addReader(context, e, 1);
      List<BucketSplit> ofReader1 =
          context.getSplitsAssignmentSequence().get(1).assignment().get(1);
      context.unregisterReader(1);
      e.addSplitsBack(ofReader1, 1);
      assertEquals(
          List.of("ticket-1"),
          e.snapshotState(2).pending().stream().map(BucketSplit::splitId).toList());
      addReader(context, e, 1);
      assertEquals(
          Map.of(0, List.of("ticket-0"), 1, List.of("ticket-1", "ticket-1")), assigned(context));
    }
  }

  @Test
  void aRestoredEnumeratorAssignsWhatItHadPendingWithoutPlanningAgain() throws Exception {
    try (FakeFlightServer server = new FakeFlightServer(3)) {
      server.append("", 0, 0, 1);
      EnumeratorState checkpoint;
      try (MockSplitEnumeratorContext<BucketSplit> context = new MockSplitEnumeratorContext<>(1);
          BucketEnumerator e =
              new BucketEnumerator(context, server.connection(), spec(false, true, 0), null)) {
        e.start();
        checkpoint =
            BucketSplitSerializer.ENUMERATOR.deserialize(
                BucketSplitSerializer.ENUMERATOR.getVersion(),
                BucketSplitSerializer.ENUMERATOR.serialize(e.snapshotState(1)));
      }
      assertEquals(1, server.plans());
      assertEquals(3, checkpoint.nextSplit());
      try (MockSplitEnumeratorContext<BucketSplit> context = new MockSplitEnumeratorContext<>(1);
          BucketEnumerator e =
              new BucketEnumerator(
                  context, server.connection(), spec(false, true, 0), checkpoint)) {
        e.start();
        addReader(context, e, 0);
        assertEquals(1, server.plans(), "restored, the plan is not made again");
        assertEquals(Map.of(0, List.of("ticket-0", "ticket-1", "ticket-2")), assigned(context));
        assertTrue(context.hasNoMoreSplits(0));
      }
    }
  }

  @Test
  void discoveryPlansEachNewPartitionOnceAndNeverEndsTheReaders() throws Throwable {
    try (FakeFlightServer server = new FakeFlightServer(1);
        MockSplitEnumeratorContext<BucketSplit> context = new MockSplitEnumeratorContext<>(2);
        BucketEnumerator e =
            new BucketEnumerator(context, server.connection(), spec(true, false, 1000), null)) {
      server.append("20261201", 7, 0, 1);
      e.start();
      addReader(context, e, 0);
      addReader(context, e, 1);
      assertEquals(Map.of(0, List.of("ticket-0")), assigned(context));
      assertEquals(1, context.getPeriodicCallables().size(), "discovery runs periodically");

      server.append("20261202", 9, 0, 2);
      context.runPeriodicCallable(0);
      assertEquals(Map.of(0, List.of("ticket-0"), 1, List.of("ticket-1")), assigned(context));
      BucketSplit added = context.getSplitsAssignmentSequence().get(1).assignment().get(1).get(0);
      assertEquals("20261202", added.json().get("partition").asText());
      assertEquals("[\"20261202\"]", server.lastScan().get("partitions").toString());
      assertEquals("earliest", server.lastScan().get("startup").asText(), "read from its start");

      context.runPeriodicCallable(0); // nothing new
      assertEquals(2, context.getSplitsAssignmentSequence().size());
      EnumeratorState state = e.snapshotState(3);
      assertEquals(Set.of(7L, 9L), state.partitions());
      assertEquals(2, state.nextSplit());
      assertFalse(context.hasNoMoreSplits(0) || context.hasNoMoreSplits(1), "never ends");
    }
  }
}
