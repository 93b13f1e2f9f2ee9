package io.fluxgate.flink.source;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.Column;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.Rows;
import io.fluxgate.client.TableSpec;
import io.fluxgate.flink.CollectingOutput;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.flink.core.io.InputStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A reader's close releases everything and throws nothing, also on an interrupted thread (Flink
 * cancels a task by interrupting it, and takes an exception from its cleanup for a fatal error).
 */
@Timeout(120)
public class SourceReaderCloseTest {
  @RegisterExtension static final ReaderFixture FIXTURE = new ReaderFixture();

  @Test
  void closeOnAnInterruptedThreadStopsTheFetchersAndThrowsNothing() throws Exception {
    String table = "fluss.closing";
    FluxgateClient client = FIXTURE.client();
    client.createTable(
        TableSpec.of(table, Column.of("id", "BIGINT")).withOptions(Map.of("bucket.num", "1")),
        false);
    // More batches than the reader's queue holds: its fetcher blocks, holding a batch.
    for (int batch = 0; batch < 20; batch++) {
      List<List<Object>> rows = new ArrayList<>();
      for (long id = 0; id < 100; id++) {
        rows.add(Rows.row(batch * 100 + id));
      }
      FIXTURE.write(table, rows);
    }
    ScanSpec spec = ReaderFixture.logScan(table, false, "id");
    Set<String> before = clientThreads();
    FluxgateSourceReader reader = FIXTURE.reader(spec);
    reader.start();
    reader.addSplits(
        List.of(
            BucketSplit.of("ticket-0", client.plan(spec.request()).tickets().get(0), List.of())));
    List<Long> ids = new ArrayList<>();
    CollectingOutput output = new CollectingOutput(row -> ids.add(row.getLong(0)));
    while (ids.isEmpty()) {
      if (reader.pollNext(output) == InputStatus.NOTHING_AVAILABLE) {
        reader.isAvailable().get();
      }
    }

    Thread.currentThread().interrupt();
    assertDoesNotThrow(reader::close);
    assertTrue(Thread.interrupted(), "close keeps the thread's interrupt");
    // A stopped event loop's thread exits just after its termination future completes.
    long deadline = System.nanoTime() + 10_000_000_000L;
    while (!clientThreads().equals(before) && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertEquals(before, clientThreads(), "the reader's fetcher and client threads have stopped");
  }

  /** The live threads of the reader's fetchers and of fluxgate clients. */
  private static Set<String> clientThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .filter(Thread::isAlive)
        .map(Thread::getName)
        .filter(n -> n.startsWith("fluxgate-") || n.startsWith("Source Data Fetcher"))
        .collect(Collectors.toSet());
  }
}
