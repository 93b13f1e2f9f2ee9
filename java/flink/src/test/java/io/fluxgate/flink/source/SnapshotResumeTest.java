package io.fluxgate.flink.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.Column;
import io.fluxgate.client.ConnectionSettings;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.Rows;
import io.fluxgate.client.ScanPlan;
import io.fluxgate.client.TableSpec;
import io.fluxgate.client.TableWriter;
import io.fluxgate.client.WriteMode;
import io.fluxgate.client.WriteRequest;
import io.fluxgate.flink.CollectingOutput;
import io.fluxgate.flink.FluxgateOptions;
import io.fluxgate.flink.ServerExtension;
import io.fluxgate.flink.TableName;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.flink.connector.testutils.source.reader.TestingReaderContext;
import org.apache.flink.core.io.InputStatus;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.data.RowData;
import org.apache.flink.types.RowKind;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Reads checkpointed where a batch's offset says nothing, and restored after the table changed: a
 * primary-key table's changelog read (its current rows, then its changes) inside the snapshot,
 * where every key must come through exactly once, and a union read inside its lake part.
 */
@Timeout(120)
public class SnapshotResumeTest {
  @RegisterExtension static final ServerExtension SERVER = new ServerExtension();

  private static final int ROWS = 40_000; // more than one snapshot batch (16K rows)

  static FluxgateClient client;
  static ConnectionSettings connection;

  @BeforeAll
  static void start() throws Exception {
    client = FluxgateClient.connect(SERVER.uri());
    connection = SERVER.connection();
  }

  @AfterAll
  static void stop() throws Exception {
    if (client != null) {
      client.close();
    }
  }

  /** The changes of a keyed table applied to a map, refusing any that could not follow. */
  static final class Materialized {
    final Map<Object, List<Object>> rows = new HashMap<>();
    int received;

    void apply(RowData row) {
      received++;
      List<Object> key = List.of(row.getLong(0), row.getString(1).toString());
      List<Object> value = List.of(row.getLong(2));
      RowKind kind = row.getRowKind();
      if (kind == RowKind.INSERT) {
        assertNull(rows.put(key, value), "a second insert of " + key);
      } else if (kind == RowKind.UPDATE_AFTER) {
        rows.put(key, value);
      } else {
        List<Object> before = rows.remove(key);
        assertEquals(value, before, kind + " of " + key + " does not match what was emitted");
        if (kind == RowKind.UPDATE_BEFORE) {
          rows.put(key, before); // its update_after follows
        }
      }
    }
  }

  @Test
  void changelogCheckpointedInsideTheSnapshotResumesExactly() throws Exception {
    String table = "fluss.resume";
    createKeyed(table);
    ScanSpec spec =
        new ScanSpec(
            table + "$changelog",
            List.of("_change_type", "id", "tag", "v"),
            null,
            "full",
            null,
            false,
            null,
            true,
            List.of("id", "tag"),
            null,
            false,
            null,
            0);
    ScanPlan plan = client.plan(spec.request());
    BucketSplit split = BucketSplit.of("ticket-0", plan.tickets().get(0), spec.keyColumns());

    Materialized out = new Materialized();
    CollectingOutput output = new CollectingOutput(out::apply);
    BucketSplit checkpointed =
        readAndCheckpoint(spec, split, output, () -> out.received > 0).get(0);
    assertTrue(out.received < ROWS, "the checkpoint is inside the snapshot: " + out.received);
    assertTrue(checkpointed instanceof SnapshotSplit, "still in the snapshot: " + checkpointed);
    assertFalse(checkpointed.cuts().isEmpty(), "the checkpoint records where the snapshot is");

    // Changes to keys already emitted, keys not emitted yet, deletes and new keys.
    write(table, WriteMode.UPSERT, 0, 100, 1);
    write(table, WriteMode.UPSERT, ROWS - 100, 100, 1);
    write(table, WriteMode.DELETE, 100, 100, 0);
    write(table, WriteMode.UPSERT, ROWS, 100, 2);
    Map<Object, List<Object>> want = new HashMap<>();
    for (List<Object> r : Rows.read(client, io.fluxgate.client.ScanRequest.of(table))) {
      want.put(List.of(r.get(0), r.get(1)), List.of(r.get(2)));
    }

    readAndCheckpoint(spec, serialized(checkpointed), output, () -> out.rows.equals(want));
    assertEquals(want, out.rows);
  }

  /**
   * A snapshot keyed by (k, n) with k of a type whose literals are not plain JSON: NaN, infinities,
   * times, bytes that are not UTF-8. The checkpoint cuts after the last key emitted, and the
   * restored read takes every other key once.
   */
  @ParameterizedTest
  @ValueSource(strings = {"FLOAT", "DOUBLE", "TIME(3)", "TIME(9)", "BYTES"})
  void snapshotCheckpointedAfterAKeyOfEveryTypeResumesAfterIt(String type) throws Exception {
    String table = "fluss.keyed_" + type.replaceAll("[^A-Za-z0-9]", "");
    client.createTable(
        TableSpec.of(table, Column.notNull("k", type), Column.notNull("n", "INT"))
            .withPrimaryKey("k", "n")
            .withOptions(Map.of("bucket.num", "1")),
        false);
    Schema schema = Rows.schema(client, table);
    List<List<Object>> rows = new ArrayList<>();
    for (int n = 0; n < ROWS; n++) {
      rows.add(Rows.row(key(type, n), n));
    }
    try (VectorSchemaRoot root = Rows.batch(client.allocator(), schema, rows);
        TableWriter w = client.newWriter(WriteRequest.of(table).withMode(WriteMode.UPSERT))) {
      w.write(root);
    }
    ScanSpec spec =
        new ScanSpec(
            table,
            List.of("n"),
            null,
            "full",
            null,
            true,
            null,
            false,
            List.of("k", "n"),
            null,
            false,
            null,
            0);
    BucketSplit split =
        BucketSplit.of("ticket-0", client.plan(spec.request()).tickets().get(0), spec.keyColumns());

    List<Integer> ns = new ArrayList<>();
    CollectingOutput output = new CollectingOutput(row -> ns.add(row.getInt(0)));
    BucketSplit checkpointed = readAndCheckpoint(spec, split, output, () -> !ns.isEmpty()).get(0);
    assertTrue(ns.size() < ROWS, "the checkpoint is inside the snapshot: " + ns.size());
    assertFalse(checkpointed.cuts().isEmpty(), "the checkpoint records the last key emitted");

    readAndCheckpoint(spec, serialized(checkpointed), output, () -> false); // to its end
    assertEachOnce(ROWS, ns);
  }

  /** The key column's value of row n: the type's unusual values, in few or many keys. */
  private static Object key(String type, int n) {
    return switch (type) {
      case "FLOAT" -> Float.NaN; // every cut is (NaN, n)
      case "DOUBLE" -> n < ROWS / 2 ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY;
      case "TIME(3)" -> n; // milliseconds of the day
      case "TIME(9)" -> n * 1_000_001L; // nanoseconds of the day, every digit of the fraction
      case "BYTES" -> new byte[] {(byte) 0xff, (byte) (n >> 8), (byte) n};
      default -> throw new IllegalArgumentException(type);
    };
  }

  /** A $changelog view read from full: its snapshot resumes by its table's key. */
  @Test
  void changelogViewReadFromFullResumesInsideTheSnapshot() throws Exception {
    String table = "fluss.viewed";
    createKeyed(table);
    FluxgateTableSource source =
        new FluxgateTableSource(
            connection,
            TableName.of("fluss", "viewed$changelog"),
            List.of(), // the view declares no key
            Map.of(),
            FluxgateOptions.StartupMode.FULL,
            true,
            null,
            false,
            DataTypes.ROW(
                DataTypes.FIELD("_change_type", DataTypes.STRING()),
                DataTypes.FIELD("id", DataTypes.BIGINT())),
            List.of(),
            0);
    ScanSpec spec = source.spec().keyed(client);
    assertEquals(List.of("id", "tag"), spec.keyColumns());
    BucketSplit split =
        BucketSplit.of("ticket-0", client.plan(spec.request()).tickets().get(0), spec.keyColumns());

    List<Long> ids = new ArrayList<>();
    CollectingOutput output = new CollectingOutput(row -> ids.add(row.getLong(1)));
    BucketSplit checkpointed = readAndCheckpoint(spec, split, output, () -> !ids.isEmpty()).get(0);
    assertTrue(ids.size() < ROWS, "the checkpoint is inside the snapshot: " + ids.size());
    assertFalse(checkpointed.cuts().isEmpty(), "the checkpoint records the last key emitted");

    write(table, WriteMode.UPSERT, ROWS, 100, 0); // new keys: one insert each
    readAndCheckpoint(spec, checkpointed, output, () -> ids.size() >= ROWS + 100);
    assertEachOnce(ROWS + 100, ids);
  }

  @Test
  void unionReadCheckpointedInsideTheLakePartResumesExactly() throws Exception {
    String table = "fluss.tiered";
    client.createTable(
        TableSpec.of(
                table,
                Column.of("id", "BIGINT"),
                Column.of("tag", "STRING"),
                Column.of("v", "BIGINT"))
            .withOptions(Map.of("bucket.num", "1", "table.datalake.enabled", "true")),
        false);
    // Two tiering rounds: two lake files, so the lake part comes in more than one batch.
    write(table, WriteMode.APPEND, 0, 100, 0);
    client.tierNow(table);
    write(table, WriteMode.APPEND, 100, 100, 0);
    client.tierNow(table);
    write(table, WriteMode.APPEND, 200, 100, 0); // in the log only
    ScanSpec spec =
        new ScanSpec(
            table,
            List.of("id"),
            null,
            "full",
            null,
            false,
            null,
            false,
            List.of(),
            null,
            false,
            null,
            0);
    ScanPlan plan = client.plan(spec.request());
    BucketSplit split = BucketSplit.of("ticket-0", plan.tickets().get(0), List.of());

    List<Long> ids = new ArrayList<>();
    CollectingOutput output = new CollectingOutput(row -> ids.add(row.getLong(0)));
    BucketSplit checkpointed = readAndCheckpoint(spec, split, output, () -> !ids.isEmpty()).get(0);
    assertTrue(ids.size() < 200, "the checkpoint is inside the lake part: " + ids.size());
    assertTrue(
        new String(checkpointed.ticket()).contains("\"lake_start\""), checkpointed.toString());

    write(table, WriteMode.APPEND, 300, 100, 0);
    readAndCheckpoint(spec, checkpointed, output, () -> ids.size() >= 400);
    List<Long> want = new ArrayList<>();
    for (long id = 0; id < 400; id++) {
      want.add(id);
    }
    ids.sort(null);
    assertEquals(want, ids);
  }

  /** Asserts that got holds 0..n-1, each once, naming a few that are missing or repeated. */
  private static void assertEachOnce(int n, List<? extends Number> got) {
    int[] seen = new int[n];
    List<Number> outside = new ArrayList<>();
    for (Number x : got) {
      if (x.longValue() >= 0 && x.longValue() < n) {
        seen[(int) x.longValue()]++;
      } else {
        outside.add(x);
      }
    }
    List<String> wrong = new ArrayList<>();
    for (int i = 0; i < n && wrong.size() < 10; i++) {
      if (seen[i] != 1) {
        wrong.add(i + " x" + seen[i]);
      }
    }
    assertTrue(
        wrong.isEmpty() && outside.isEmpty(),
        got.size() + " values of " + n + "; not once: " + wrong + "; outside: " + outside);
  }

  /**
   * Reads split alone into output until done holds or the split ends, failing after a deadline, and
   * returns the reader's checkpoint then: the split's state, or none once it has ended.
   */
  private static List<BucketSplit> readAndCheckpoint(
      ScanSpec spec, BucketSplit split, CollectingOutput output, BooleanSupplier done)
      throws Exception {
    try (FluxgateSourceReader reader =
        FluxgateSourceReader.create(connection, spec, new TestingReaderContext())) {
      reader.start();
      reader.addSplits(List.of(split));
      reader.notifyNoMoreSplits(); // an unbounded split never ends, so this only ends bounded ones
      long deadline = System.nanoTime() + 60_000_000_000L;
      while (!done.getAsBoolean()) {
        assertTrue(System.nanoTime() < deadline, "timed out");
        InputStatus status = reader.pollNext(output);
        if (status == InputStatus.END_OF_INPUT) {
          break;
        }
        if (status == InputStatus.NOTHING_AVAILABLE) {
          reader.isAvailable().get();
        }
      }
      return reader.snapshotState(1);
    }
  }

  /** The split as a restore gets it: through its serializer. */
  private static BucketSplit serialized(BucketSplit split) throws Exception {
    return BucketSplitSerializer.SPLIT.deserialize(
        BucketSplitSerializer.SPLIT.getVersion(), BucketSplitSerializer.SPLIT.serialize(split));
  }

  /** Creates table keyed by (id, tag), value v, in one bucket, with ids 0..ROWS-1 of value 0. */
  private static void createKeyed(String table) {
    client.createTable(
        TableSpec.of(
                table,
                Column.notNull("id", "BIGINT"),
                Column.notNull("tag", "STRING"),
                Column.of("v", "BIGINT"))
            .withPrimaryKey("id", "tag")
            .withOptions(Map.of("bucket.num", "1")),
        false);
    write(table, WriteMode.UPSERT, 0, ROWS, 0);
  }

  /** Writes ids from..from+n with tag "t"+id and value v, in one batch. */
  private static void write(String table, WriteMode mode, int from, int n, long v) {
    Schema schema = Rows.schema(client, table);
    List<List<Object>> rows = new ArrayList<>();
    for (long id = from; id < from + n; id++) {
      rows.add(Rows.row(id, "t" + id, v));
    }
    try (VectorSchemaRoot root = Rows.batch(client.allocator(), schema, rows);
        TableWriter w = client.newWriter(WriteRequest.of(table).withMode(mode))) {
      w.write(root);
    }
  }
}
