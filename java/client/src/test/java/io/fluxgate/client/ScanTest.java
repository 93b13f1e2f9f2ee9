package io.fluxgate.client;

import static io.fluxgate.client.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ScanTest extends ServerTest {
  private String name;
  private Schema schema;

  /** A one-bucket log table with rows (i, "cat" + i % 3, i * 1.5) for i in 0..9, offsets 0..9. */
  @BeforeEach
  void fill() {
    name = table("events");
    client.createTable(
        TableSpec.of(
            name, Column.of("id", "BIGINT"), Column.of("cat", "STRING"), Column.of("v", "DOUBLE")),
        false);
    schema = Rows.schema(client, name);
    List<List<Object>> rows = new ArrayList<>();
    for (long i = 0; i < 10; i++) {
      rows.add(row(i, "cat" + i % 3, i * 1.5));
    }
    append(rows);
  }

  private void append(List<List<Object>> rows) {
    try (VectorSchemaRoot batch = Rows.batch(allocator, schema, rows);
        TableWriter w = client.newWriter(WriteRequest.of(name))) {
      w.write(batch);
    }
  }

  @Test
  void projectionFilterAndLimit() {
    ScanRequest filtered =
        ScanRequest.of(name)
            .withColumns("v", "id")
            .withFilter(
                Predicates.and(Predicates.ge("v", 3), Predicates.in("cat", "cat0", "cat1")));
    assertEquals(
        List.of(row(4.5, 3L), row(6.0, 4L), row(9.0, 6L), row(10.5, 7L), row(13.5, 9L)),
        Rows.read(client, filtered));
    assertEquals(3, Rows.read(client, filtered.withLimit(3)).size());
    assertEquals(
        List.of(row(2L), row(5L), row(8L)),
        Rows.read(
            client,
            ScanRequest.of(name)
                .withColumns("id")
                .withFilter(Predicates.parse("{\"eq\": [\"cat\", \"cat2\"]}"))));
  }

  @Test
  void startAndStopOffsetsAndListOffsets() {
    assertEquals(Map.of(0, 0L), client.listOffsets(name, Position.EARLIEST, null));
    assertEquals(Map.of(0, 10L), client.listOffsets(name, Position.LATEST, List.of(0)));
    List<List<Object>> middle =
        Rows.read(
            client,
            ScanRequest.of(name)
                .withColumns("id")
                .withStartup(Position.atOffsets(Map.of(0, 4L)))
                .withStop(Position.atOffsets(Map.of(0, 7L))));
    assertEquals(List.of(row(4L), row(5L), row(6L)), middle);
    assertEquals(List.of(), Rows.read(client, ScanRequest.of(name).withStartup(Position.LATEST)));
  }

  @Test
  void rowCountOfALogTableIsTheOffsetsOfEveryBucket() {
    String spread = table("spread");
    client.createTable(
        TableSpec.of(spread, Column.of("id", "BIGINT")).withOptions(Map.of("bucket.num", "3")),
        false);
    List<List<Object>> rows = new ArrayList<>();
    for (long i = 0; i < 30; i++) {
      rows.add(row(i));
    }
    write(WriteRequest.of(spread), rows);
    TableStats stats = client.tableStats(spread);
    assertEquals(30, stats.rowCount());
    assertEquals(3, stats.buckets().size());
    assertEquals(30, stats.buckets().values().stream().mapToLong(Long::longValue).sum());
    assertEquals(OptionalLong.of(30), client.rowCount(spread));
    assertEquals(OptionalLong.of(10), client.rowCount(name));
    assertEquals(OptionalLong.empty(), client.rowCount(name + "$changelog"), "a view");
  }

  @Test
  void rowCountOfAPrimaryKeyTableIsItsCurrentRows() {
    String keyed = table("keyed");
    client.createTable(
        TableSpec.of(keyed, Column.of("id", "BIGINT"), Column.of("v", "BIGINT"))
            .withPrimaryKey("id")
            .withOptions(Map.of("bucket.num", "2")),
        false);
    write(WriteRequest.of(keyed), List.of(row(1L, 1L), row(2L, 2L), row(3L, 3L)));
    write(WriteRequest.of(keyed), List.of(row(1L, 10L), row(4L, 4L)));
    write(WriteRequest.of(keyed).withMode(WriteMode.DELETE), List.of(row(2L, null), row(9L, null)));
    assertEquals(OptionalLong.of(3), client.rowCount(keyed));

    String wal = table("wal");
    client.createTable(
        TableSpec.of(wal, Column.of("id", "BIGINT"))
            .withPrimaryKey("id")
            .withOptions(Map.of("table.changelog.image", "wal")),
        false);
    assertEquals(OptionalLong.empty(), client.rowCount(wal), "a WAL-image table keeps no count");
  }

  private void write(WriteRequest request, List<List<Object>> rows) {
    try (VectorSchemaRoot batch =
            Rows.batch(allocator, Rows.schema(client, request.table()), rows);
        TableWriter w = client.newWriter(request)) {
      w.write(batch);
    }
  }

  @Test
  void timestampStartup() {
    long future = System.currentTimeMillis() + 3_600_000;
    assertEquals(Map.of(0, 10L), client.listOffsets(name, Position.atTimestamp(future), null));
    assertEquals(
        List.of(),
        Rows.read(client, ScanRequest.of(name).withStartup(Position.atTimestamp(future))));
    assertEquals(
        10, Rows.read(client, ScanRequest.of(name).withStartup(Position.atTimestamp(0))).size());
  }

  @Test
  void batchesCarryTheirOffsets() {
    try (Scanner s = client.scan(ScanRequest.of(name).withCompression(Compression.ZSTD))) {
      long rows = 0;
      long next = 0;
      while (s.next()) {
        BatchMeta m = s.meta();
        assertEquals(0, m.bucket());
        assertEquals(next, m.start(), "batches cover the offsets without gaps");
        next = m.next();
        rows += s.root().getRowCount();
      }
      assertEquals(10, rows);
      assertEquals(10, next);
    }
  }

  @Test
  void followSeesNewRowsAndResumesFromTheStoredOffset() {
    ScanPlan plan =
        client.plan(ScanRequest.of(name).withColumns("id").withStop(Position.UNBOUNDED));
    assertEquals(1, plan.tickets().size());
    long resumeFrom;
    try (TicketStream follow = client.read(plan.tickets().get(0))) {
      assertEquals(10, readUntil(follow, 10, new ArrayList<>()));
      append(List.of(row(10L, "cat1", 0.0), row(11L, "cat2", 0.0)));
      List<List<Object>> seen = new ArrayList<>();
      resumeFrom = readUntil(follow, 12, seen);
      assertEquals(List.of(row(10L), row(11L)), seen);
    }
    append(List.of(row(12L, "cat0", 0.0)));
    ScanPlan resumed =
        client.plan(
            ScanRequest.of(name)
                .withColumns("id")
                .withStartup(Position.atOffsets(Map.of(0, resumeFrom)))
                .withStop(Position.UNBOUNDED));
    try (TicketStream follow = client.read(resumed.tickets().get(0))) {
      List<List<Object>> seen = new ArrayList<>();
      readUntil(follow, 13, seen);
      assertEquals(List.of(row(12L)), seen);
    }
  }

  /** Reads a followed stream until its next offset reaches target; returns that offset. */
  private static long readUntil(TicketStream s, long target, List<List<Object>> rows) {
    long next = -1;
    while (next < target) {
      assertTrue(s.next(), "an unbounded stream does not end");
      rows.addAll(Rows.rows(s.root()));
      next = s.meta().next();
    }
    return next;
  }

  @Test
  void plainTableDescriptorScansEverything() {
    ScanPlan plan = client.planTable(name);
    assertEquals(10, Rows.read(client, ScanRequest.of(name)).size());
    assertEquals(schema, plan.schema());
    assertTrue(plan.meta().tableId() > 0);
  }

  @Test
  void badFilterIsInvalidArgumentNamingTheNode() {
    FluxgateException.InvalidArgument e =
        assertThrows(
            FluxgateException.InvalidArgument.class,
            () ->
                client.plan(
                    ScanRequest.of(name)
                        .withFilter(
                            Predicates.and(Predicates.eq("id", 1), Predicates.gt("nope", 1)))));
    assertTrue(e.getMessage().contains("nope"), e.getMessage());
  }

  @Test
  void startBeyondTheHighWatermarkIsOutOfRange() {
    assertThrows(
        FluxgateException.OutOfRange.class,
        () ->
            Rows.read(
                client, ScanRequest.of(name).withStartup(Position.atOffsets(Map.of(0, 50L)))));
  }
}
