package io.fluxgate.client;

import static io.fluxgate.client.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;

class WriteTest extends ServerTest {

  private String logTable() {
    String name = table("log");
    client.createTable(
        TableSpec.of(name, Column.of("id", "BIGINT"), Column.of("s", "STRING")), false);
    return name;
  }

  private String keyedTable() {
    String name = table("pk");
    client.createTable(
        TableSpec.of(
                name,
                Column.of("id", "BIGINT"),
                Column.of("name", "STRING"),
                Column.of("score", "INT"))
            .withPrimaryKey("id"),
        false);
    return name;
  }

  private PutResult write(WriteRequest req, Schema schema, List<List<Object>> rows) {
    try (VectorSchemaRoot batch = Rows.batch(allocator, schema, rows);
        TableWriter w = client.newWriter(req)) {
      return w.write(batch);
    }
  }

  private static List<List<Object>> sorted(List<List<Object>> rows) {
    List<List<Object>> out = new ArrayList<>(rows);
    out.sort(Comparator.comparing(r -> (Long) r.get(0)));
    return out;
  }

  @Test
  void pipelinedSendsGetOneResultEachInOrder() {
    String name = logTable();
    Schema schema = Rows.schema(client, name);
    List<PutResult> results;
    try (TableWriter w = client.newWriter(WriteRequest.of(name), Compression.ZSTD, 2)) {
      for (long i = 0; i < 10; i++) {
        try (VectorSchemaRoot batch =
            Rows.batch(allocator, schema, List.of(row(i, "a"), row(i, "b")))) {
          w.send(batch);
        }
      }
      results = w.flush();
    }
    assertEquals(10, results.size());
    for (int i = 0; i < 10; i++) {
      assertEquals(i, results.get(i).sequence());
      assertEquals(Map.of(0, 2L * (i + 1)), results.get(i).buckets());
    }
    assertEquals(20, Rows.read(client, ScanRequest.of(name)).size());
  }

  @Test
  void writerStateTellsWhereAWriterGoesOn() {
    String name = logTable();
    Schema schema = Rows.schema(client, name);
    assertEquals(0, client.writerState(name, "ws"));
    try (TableWriter w = client.newWriter(WriteRequest.of(name).withWriter("ws", 0))) {
      for (long i = 0; i < 3; i++) {
        try (VectorSchemaRoot batch = Rows.batch(allocator, schema, List.of(row(i, "a")))) {
          w.write(batch);
        }
      }
    }
    assertEquals(3, client.writerState(name, "ws"));
    assertEquals(0, client.writerState(name, "other"));
  }

  @Test
  void pipelinedSendsFailWithTheServersErrorRatherThanWait() {
    String name = logTable();
    Schema schema = Rows.schema(client, name);
    // A gap: the server refuses the first batch and ends the stream.
    WriteRequest gap = WriteRequest.of(name).withWriter("gap", 0);
    write(gap, schema, List.of(row(1L, "a")));
    FluxgateException e =
        assertTimeoutPreemptively(
            java.time.Duration.ofMinutes(1), // a guard against the hang this test is about
            () ->
                assertThrows(
                    FluxgateException.class,
                    () -> {
                      try (TableWriter w =
                          client.newWriter(gap.withWriter("gap", 5), Compression.NONE, 2)) {
                        for (long i = 0; i < 20; i++) {
                          try (VectorSchemaRoot batch =
                              Rows.batch(allocator, schema, List.of(row(i, "b")))) {
                            w.send(batch);
                          }
                        }
                      }
                    }));
    assertTrue(e.getMessage().contains("out of order"), e.getMessage());
  }

  @Test
  void idempotentWriterRetryDoesNotDuplicate() {
    String name = logTable();
    Schema schema = Rows.schema(client, name);
    List<List<List<Object>>> batches =
        List.of(List.of(row(1L, "a")), List.of(row(2L, "b"), row(3L, "c")), List.of(row(4L, "d")));
    List<PutResult> first = new ArrayList<>();
    try (TableWriter w = client.newWriter(WriteRequest.of(name).withWriter("writer-1", 0))) {
      for (List<List<Object>> rows : batches.subList(0, 2)) {
        try (VectorSchemaRoot b = Rows.batch(allocator, schema, rows)) {
          first.add(w.write(b));
        }
      }
    }
    // A retry after a lost connection sends everything again from the first sequence.
    List<PutResult> retry = new ArrayList<>();
    try (TableWriter w = client.newWriter(WriteRequest.of(name).withWriter("writer-1", 0))) {
      for (List<List<Object>> rows : batches) {
        try (VectorSchemaRoot b = Rows.batch(allocator, schema, rows)) {
          retry.add(w.write(b));
        }
      }
    }
    assertEquals(
        first, retry.subList(0, 2), "a retried batch is acknowledged with its original offsets");
    assertEquals(2, retry.get(2).sequence());
    assertEquals(
        List.of(row(1L, "a"), row(2L, "b"), row(3L, "c"), row(4L, "d")),
        Rows.read(client, ScanRequest.of(name)));
  }

  @Test
  void sequenceGapIsFailedPrecondition() {
    String name = logTable();
    Schema schema = Rows.schema(client, name);
    write(WriteRequest.of(name).withWriter("writer-gap", 0), schema, List.of(row(1L, "a")));
    FluxgateException.FailedPrecondition e =
        assertThrows(
            FluxgateException.FailedPrecondition.class,
            () ->
                write(
                    WriteRequest.of(name).withWriter("writer-gap", 5),
                    schema,
                    List.of(row(1L, "a"))));
    assertTrue(e.getMessage().contains("sequence"), e.getMessage());
  }

  @Test
  void primaryKeyUpsertDeleteAndPartialUpdate() {
    String name = keyedTable();
    Schema all = Rows.schema(client, name);
    write(
        WriteRequest.of(name), all, List.of(row(1L, "a", 10), row(2L, "b", 20), row(3L, "c", 30)));
    write(WriteRequest.of(name).withMode(WriteMode.UPSERT), all, List.of(row(1L, "a2", 11)));
    write(
        WriteRequest.of(name).withMode(WriteMode.DELETE),
        Rows.schema(client, name, "id"),
        List.of(row(2L)));
    write(
        WriteRequest.of(name).withColumns("id", "score"),
        Rows.schema(client, name, "id", "score"),
        List.of(row(3L, 99)));

    assertEquals(
        List.of(row(1L, "a2", 11), row(3L, "c", 99)),
        sorted(Rows.read(client, ScanRequest.of(name))));
  }

  @Test
  void changelogViewShowsEveryChange() {
    String name = keyedTable();
    Schema all = Rows.schema(client, name);
    write(WriteRequest.of(name), all, List.of(row(1L, "a", 10)));
    write(WriteRequest.of(name), all, List.of(row(1L, "b", 11)));
    write(
        WriteRequest.of(name).withMode(WriteMode.DELETE),
        Rows.schema(client, name, "id"),
        List.of(row(1L)));

    List<List<Object>> changes =
        Rows.read(
            client,
            ScanRequest.of(name + "$changelog")
                .withColumns("_change_type", "_log_offset", "id", "name"));
    assertEquals(
        List.of(
            row("insert", 0L, 1L, "a"),
            row("update_before", 1L, 1L, "a"),
            row("update_after", 2L, 1L, "b"),
            row("delete", 3L, 1L, "b")),
        changes);
  }

  @Test
  void changelogWriteModeAppliesChangeTypes() {
    String name = keyedTable();
    write(
        WriteRequest.of(name),
        Rows.schema(client, name),
        List.of(row(1L, "a", 10), row(2L, "b", 20)));
    List<Field> fields = new ArrayList<>();
    fields.add(Field.nullable("_change_type", ArrowType.Utf8.INSTANCE));
    fields.addAll(Rows.schema(client, name).getFields());
    write(
        WriteRequest.of(name).withMode(WriteMode.CHANGELOG),
        new Schema(fields),
        List.of(
            row("insert", 3L, "c", 30),
            row("update_before", 1L, "a", 10),
            row("update_after", 1L, "a2", 12),
            row("delete", 2L, "b", 20)));
    assertEquals(
        List.of(row(1L, "a2", 12), row(3L, "c", 30)),
        sorted(Rows.read(client, ScanRequest.of(name))));
  }

  @Test
  void undoRestoresTheRowsAtTheOffsets() {
    String name = keyedTable();
    Schema all = Rows.schema(client, name);
    write(WriteRequest.of(name), all, List.of(row(1L, "a", 10), row(2L, "b", 20)));
    Map<Integer, Long> checkpoint = client.listOffsets(name, Position.LATEST, null);
    write(WriteRequest.of(name), all, List.of(row(1L, "changed", 11), row(3L, "new", 30)));

    UndoResult undo = client.undo(name, checkpoint);
    assertEquals(2, undo.undoneKeys());
    assertEquals(
        List.of(row(1L, "a", 10), row(2L, "b", 20)),
        sorted(Rows.read(client, ScanRequest.of(name))));
  }

  @Test
  void producerOffsetsAreRegisteredOnceUntilDeleted() {
    String name = keyedTable();
    Map<Integer, Long> start = client.listOffsets(name, Position.LATEST, null);
    assertTrue(client.producerOffsets("job-1", name).isEmpty());
    assertTrue(client.registerProducerOffsets("job-1", name, start));
    // A second attempt keeps the first attempt's offsets: what it must undo back to.
    assertFalse(client.registerProducerOffsets("job-1", name, Map.of(0, 99L)));
    assertEquals(start, client.producerOffsets("job-1", name).orElseThrow());
    client.deleteProducerOffsets("job-1", name);
    assertTrue(client.producerOffsets("job-1", name).isEmpty());
  }

  @Test
  void tieredRowsReadFromTheLakeAndTheUnion() {
    String name = table("lake");
    client.createTable(
        TableSpec.of(name, Column.of("id", "BIGINT"), Column.of("s", "STRING"))
            .withOptions(Map.of("table.datalake.enabled", "true")),
        false);
    Schema schema = Rows.schema(client, name);
    write(WriteRequest.of(name), schema, List.of(row(1L, "a"), row(2L, "b")));
    LakeSnapshot snapshot = client.tierNow(name);
    assertEquals(Map.of(0, 2L), snapshot.offsets());
    assertEquals(snapshot, client.lakeSnapshot(name));
    write(WriteRequest.of(name), schema, List.of(row(3L, "c")));

    assertEquals(
        List.of(row(1L, "a"), row(2L, "b")),
        Rows.read(client, ScanRequest.of(name + "$lake").withColumns("id", "s")));
    ScanPlan union = client.plan(ScanRequest.of(name));
    assertEquals(snapshot.snapshotId(), union.meta().lakeSnapshotId());
    assertEquals(
        List.of(row(1L, "a"), row(2L, "b"), row(3L, "c")), Rows.read(client, ScanRequest.of(name)));
  }
}
