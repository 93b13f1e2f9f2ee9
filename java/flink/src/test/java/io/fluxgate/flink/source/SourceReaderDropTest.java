package io.fluxgate.flink.source;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fluxgate.client.Column;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.Rows;
import io.fluxgate.client.ScanPlan;
import io.fluxgate.client.TableSpec;
import io.fluxgate.flink.CollectingOutput;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.apache.flink.core.io.InputStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A streaming reader across a dropped partition, as Fluss's: the splits of the dropped partition
 * end, also one restored from a checkpoint taken before the drop, and the others keep reading.
 */
@Timeout(120)
public class SourceReaderDropTest {
  @RegisterExtension static final ReaderFixture FIXTURE = new ReaderFixture();

  @Test
  void theSplitsOfADroppedPartitionEndAndTheOthersKeepReading() throws Exception {
    String table = "fluss.dropping";
    FluxgateClient client = FIXTURE.client();
    client.createTable(
        TableSpec.of(table, Column.of("id", "BIGINT"), Column.of("dt", "STRING"))
            .withPartitionKeys("dt")
            .withOptions(Map.of("bucket.num", "1")),
        false);
    FIXTURE.write(table, List.of(Rows.row(1L, "20261201"), Rows.row(2L, "20261202")));
    ScanSpec spec = ReaderFixture.logScan(table, true, "id", "dt");
    ScanPlan plan = client.plan(spec.request()); // one ticket per partition, in name order
    LogSplit dropped = (LogSplit) BucketSplit.of("ticket-0", plan.tickets().get(0), List.of());
    LogSplit kept = (LogSplit) BucketSplit.of("ticket-1", plan.tickets().get(1), List.of());

    List<Long> ids = new ArrayList<>();
    FluxgateSourceReader reader = FIXTURE.reader(spec);
    try {
      reader.start();
      reader.addSplits(List.of(dropped, kept));
      pollUntil(reader, ids, () -> ids.size() == 2);
      client.dropPartition(table, Map.of("dt", "20261201"), false);
      pollUntil(reader, ids, () -> splitIds(reader).equals(Set.of("ticket-1")));
      FIXTURE.write(table, List.of(Rows.row(3L, "20261202")));
      pollUntil(reader, ids, () -> ids.contains(3L));
    } finally {
      reader.close();
    }
    assertEquals(List.of(1L, 2L, 3L), ids.stream().sorted().toList());

    // A reader restored from a checkpoint taken before the drop ends that split too.
    FluxgateSourceReader restored = FIXTURE.reader(spec);
    List<Long> again = new ArrayList<>();
    try {
      restored.addSplits(List.of(dropped.resumeAt(1), kept.resumeAt(1)));
      restored.start();
      pollUntil(restored, again, () -> splitIds(restored).equals(Set.of("ticket-1")));
      pollUntil(restored, again, () -> again.contains(3L));
    } finally {
      restored.close();
    }
    assertEquals(List.of(3L), again);
  }

  private static Set<String> splitIds(FluxgateSourceReader reader) {
    return reader.snapshotState(0).stream()
        .map(BucketSplit::splitId)
        .collect(Collectors.toCollection(TreeSet::new));
  }

  /** Polls reader, collecting the ids it emits, until done holds (the test's timeout bounds it). */
  private static void pollUntil(FluxgateSourceReader reader, List<Long> ids, Condition done)
      throws Exception {
    CollectingOutput output = new CollectingOutput(row -> ids.add(row.getLong(0)));
    while (!done.holds()) {
      if (reader.pollNext(output) == InputStatus.NOTHING_AVAILABLE && !done.holds()) {
        reader.isAvailable().get();
      }
    }
  }

  interface Condition {
    boolean holds();
  }
}
