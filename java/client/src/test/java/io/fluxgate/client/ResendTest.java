package io.fluxgate.client;

import static io.fluxgate.client.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** A resending writer outlives a server restart, and the server applies each batch once. */
@Timeout(120)
class ResendTest {
  @TempDir Path dir;

  @Test
  void batchesSentAcrossARestartAreAppliedOnce() throws Exception {
    FluxgateServer server = FluxgateServer.start(dir);
    try (RootAllocator allocator = new RootAllocator();
        FluxgateClient client =
            FluxgateClient.connect(
                server.uri(), ConnectOptions.defaults().withAllocator(allocator))) {
      String table = "fluss.resent";
      client.createTable(
          TableSpec.of(table, Column.of("id", "BIGINT"), Column.of("s", "STRING")), false);
      Schema schema = Rows.schema(client, table);
      int batches = 40;
      try (ResendingWriter writer =
          new ResendingWriter(
              client,
              WriteRequest.of(table).withWriter("resend-test", 0),
              Compression.ZSTD,
              16,
              Duration.ofSeconds(60))) {
        for (int b = 0; b < batches; b++) {
          List<List<Object>> rows = new ArrayList<>();
          for (long i = 0; i < 100; i++) {
            rows.add(row(b * 100L + i, "v"));
          }
          try (VectorSchemaRoot batch = Rows.batch(allocator, schema, rows)) {
            writer.send(batch);
          }
          if (b == batches / 2) {
            server = server.restarted(); // batches in flight, acknowledged or not
          }
        }
        writer.flush();
        assertTrue(writer.reopened() >= 1, "the stream was never replaced");
      }
      List<List<Object>> read = Rows.read(client, ScanRequest.of(table));
      assertEquals(batches * 100, read.size(), "rows lost or duplicated");
      assertEquals(
          batches * 100L, read.stream().map(r -> r.get(0)).distinct().count(), "rows duplicated");
    } finally {
      server.close();
    }
  }
}
