package io.fluxgate.flink.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.FluxgateClient;
import io.fluxgate.flink.CollectingOutput;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;
import org.apache.flink.connector.testutils.source.reader.TestingReaderContext;
import org.apache.flink.core.io.InputStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The source reader on Flink's testing context against {@link FakeFlightServer}: bounded splits to
 * the end of input, a checkpoint between batches resumed exactly, and an unbounded split that only
 * close ends.
 */
@Timeout(60)
public class SourceReaderTest {
  private static ScanSpec spec(boolean bounded) {
    return new ScanSpec(
        FakeFlightServer.TABLE,
        List.of("id"),
        null,
        "earliest",
        null,
        bounded,
        null,
        false,
        List.of(),
        null,
        false,
        null,
        0);
  }

  /** The plan's tickets as splits, as the enumerator makes them. */
  private static List<BucketSplit> splits(FakeFlightServer server, ScanSpec spec) {
    try (FluxgateClient client = server.connection().connect()) {
      List<BucketSplit> out = new ArrayList<>();
      for (byte[] ticket : client.plan(spec.request()).tickets()) {
        out.add(BucketSplit.of("ticket-" + out.size(), ticket, List.of()));
      }
      return out;
    }
  }

  /** Polls reader into output until done holds or the input ends; returns the last status. */
  private static InputStatus pollUntil(
      FluxgateSourceReader reader, Ids output, BooleanSupplier done) throws Exception {
    InputStatus status = InputStatus.MORE_AVAILABLE;
    while (!done.getAsBoolean() && status != InputStatus.END_OF_INPUT) {
      status = reader.pollNext(output.output);
      if (status == InputStatus.NOTHING_AVAILABLE) {
        reader.isAvailable().get();
      }
    }
    return status;
  }

  /** The ids a reader emitted: its rows are valid only until its next poll. */
  private static final class Ids {
    final List<Long> ids = new ArrayList<>();
    final CollectingOutput output = new CollectingOutput(row -> ids.add(row.getLong(0)));

    List<Long> sorted() {
      return ids.stream().sorted().toList();
    }
  }

  @Test
  void boundedSplitsAreReadWholeAndThenTheInputEnds() throws Exception {
    try (FakeFlightServer server = new FakeFlightServer(2)) {
      server.append("", 0, 0, 1, 3, 5, 7, 9);
      server.append("", 0, 1, 2, 4);
      Ids output = new Ids();
      try (FluxgateSourceReader reader =
          FluxgateSourceReader.create(
              server.connection(), spec(true), new TestingReaderContext())) {
        reader.start();
        reader.addSplits(splits(server, spec(true)));
        reader.notifyNoMoreSplits();
        assertEquals(InputStatus.END_OF_INPUT, pollUntil(reader, output, () -> false));
        assertEquals(List.of(), reader.snapshotState(1), "ended splits are not checkpointed");
      }
      assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 7L, 9L), output.sorted());
    }
  }

  @Test
  void aCheckpointAfterABatchResumesAfterItExactlyOnce() throws Exception {
    try (FakeFlightServer server = new FakeFlightServer(1)) {
      long[] all = {10, 11, 12, 13, 14, 15, 16, 17};
      server.append("", 0, 0, all);
      Ids output = new Ids();
      BucketSplit checkpointed;
      try (FluxgateSourceReader reader =
          FluxgateSourceReader.create(
              server.connection(), spec(true), new TestingReaderContext())) {
        reader.start();
        reader.addSplits(splits(server, spec(true)));
        pollUntil(reader, output, () -> !output.ids.isEmpty());
        List<BucketSplit> state = reader.snapshotState(1);
        assertEquals(1, state.size());
        checkpointed =
            BucketSplitSerializer.SPLIT.deserialize(
                BucketSplitSerializer.SPLIT.getVersion(),
                BucketSplitSerializer.SPLIT.serialize(state.get(0)));
      }
      // A batch is emitted whole: the checkpoint is at its end.
      assertEquals(FakeFlightServer.BATCH, output.ids.size());
      assertInstanceOf(LogSplit.class, checkpointed);
      assertEquals(FakeFlightServer.BATCH, checkpointed.json().get("start").asLong());

      try (FluxgateSourceReader restored =
          FluxgateSourceReader.create(
              server.connection(), spec(true), new TestingReaderContext())) {
        restored.addSplits(List.of(checkpointed)); // restored splits come before start
        restored.start();
        restored.notifyNoMoreSplits();
        assertEquals(InputStatus.END_OF_INPUT, pollUntil(restored, output, () -> false));
      }
      assertEquals(List.of(10L, 11L, 12L, 13L, 14L, 15L, 16L, 17L), output.sorted());
    }
  }

  @Test
  void anUnboundedSplitNeverEndsAndCloseStopsItsFetcher() throws Exception {
    try (FakeFlightServer server = new FakeFlightServer(1)) {
      server.append("", 0, 0, 1, 2, 3, 4);
      Ids output = new Ids();
      Set<Thread> before = fetcherThreads();
      FluxgateSourceReader reader =
          FluxgateSourceReader.create(server.connection(), spec(false), new TestingReaderContext());
      try {
        reader.start();
        reader.addSplits(splits(server, spec(false)));
        reader.notifyNoMoreSplits();
        pollUntil(reader, output, () -> output.ids.size() == 4);
        assertEquals(InputStatus.NOTHING_AVAILABLE, reader.pollNext(output.output));
        assertEquals(4, reader.snapshotState(2).get(0).json().get("start").asLong());
        assertTrue(fetcherThreads().size() > before.size(), "a fetcher reads the split");
      } finally {
        reader.close();
      }
      // A pool's thread exits just after the pool reports its termination.
      long deadline = System.nanoTime() + 10_000_000_000L;
      while (!fetcherThreads().equals(before) && System.nanoTime() < deadline) {
        Thread.onSpinWait();
      }
      assertEquals(before, fetcherThreads(), "close stopped the fetcher");
      assertEquals(List.of(1L, 2L, 3L, 4L), output.sorted());
    }
  }

  private static Set<Thread> fetcherThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(t -> t.isAlive() && t.getName().startsWith("Source Data Fetcher"))
        .collect(Collectors.toSet());
  }
}
