package io.fluxgate.spark;

import static io.fluxgate.client.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.Column;
import io.fluxgate.client.ScanRequest;
import io.fluxgate.client.TableSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;

class BatchReadTest extends SparkServerTest {
  /** A log table of 3 buckets with rows (i, "cat" + i % 3, i * 1.5), i in 0..29, in two writes. */
  private static String logTable(Map<String, String> options) {
    String name = table("events");
    client.createTable(
        TableSpec.of(
                name,
                Column.of("id", "BIGINT"),
                Column.of("cat", "STRING"),
                Column.of("v", "DOUBLE"))
            .withOptions(options),
        false);
    for (int part = 0; part < 2; part++) {
      write(name, rows(part * 15, part * 15 + 15));
    }
    return name;
  }

  private static List<List<Object>> rows(long from, long to) {
    List<List<Object>> rows = new ArrayList<>();
    for (long i = from; i < to; i++) {
      rows.add(row(i, "cat" + i % 3, i * 1.5));
    }
    return rows;
  }

  @Test
  void logTableReadsEveryRowOnePartitionPerBucket() {
    String name = logTable(Map.of("bucket.num", "3"));
    Dataset<Row> df = read(name);
    assertEquals(3, df.rdd().getNumPartitions());
    assertEquals(rows(0, 30), rows(df.orderBy("id")));
  }

  @Test
  void catalogReadsCurrentRowsAndChangelogOfPrimaryKeyTable() {
    String name = table("pk");
    client.createTable(
        TableSpec.of(
                name,
                Column.notNull("id", "BIGINT"),
                Column.of("name", "STRING"),
                Column.of("v", "INT"))
            .withPrimaryKey("id")
            .withOptions(Map.of("bucket.num", "1")),
        false);
    write(name, List.of(row(1L, "a", 10), row(2L, "b", 20)));
    write(name, List.of(row(1L, "a", 11)));

    assertEquals(
        List.of(row(1L, "a", 11), row(2L, "b", 20)),
        rows(spark.sql("SELECT * FROM fg." + name + " ORDER BY id")));
    String changelog = "fg.fluss.`" + name.substring("fluss.".length()) + "$changelog`";
    assertEquals(
        List.of(
            row("insert", 0L, 1L, 10),
            row("insert", 1L, 2L, 20),
            row("update_before", 2L, 1L, 10),
            row("update_after", 3L, 1L, 11)),
        rows(
            spark.sql(
                "SELECT _change_type, _log_offset, id, v FROM "
                    + changelog
                    + " ORDER BY _log_offset")));
    assertTrue(
        spark.sql("SHOW TABLES IN fg.fluss").collectAsList().stream()
            .anyMatch(r -> name.endsWith("." + r.getString(1))),
        "SHOW TABLES lists " + name);
  }

  @Test
  void lakeViewAndUnionRead() {
    String name = table("lake");
    client.createTable(
        TableSpec.of(
                name,
                Column.of("id", "BIGINT"),
                Column.of("cat", "STRING"),
                Column.of("v", "DOUBLE"))
            .withOptions(Map.of("table.datalake.enabled", "true", "bucket.num", "2")),
        false);
    write(name, rows(0, 6));
    long snapshot = client.tierNow(name).snapshotId();
    write(name, rows(6, 10));

    assertEquals(rows(0, 6), rows(read(name + "$lake").select("id", "cat", "v").orderBy("id")));
    assertEquals(
        snapshot,
        client.plan(ScanRequest.of(name)).meta().lakeSnapshotId(),
        "a plain read of the table is a union read of this snapshot and the log after it");
    assertEquals(rows(0, 10), rows(read(name).orderBy("id")), "the union read has every row");
  }

  @Test
  void unionReadOfPrimaryKeyTableHasTheCurrentRows() {
    String name = table("lakepk");
    client.createTable(
        TableSpec.of(name, Column.notNull("id", "BIGINT"), Column.of("v", "STRING"))
            .withPrimaryKey("id")
            .withOptions(Map.of("table.datalake.enabled", "true", "bucket.num", "2")),
        false);
    write(name, List.of(row(1L, "a"), row(2L, "b"), row(3L, "c")));
    client.tierNow(name);
    write(name, List.of(row(2L, "B"), row(4L, "d")));

    assertEquals(
        List.of(row(1L, "a"), row(2L, "B"), row(3L, "c"), row(4L, "d")),
        rows(spark.sql("SELECT * FROM fg." + name + " ORDER BY id")));
  }

  @Test
  void pushdownReadsFewerBytesAndShowsInExplain() {
    String name = logTable(Map.of("bucket.num", "3"));
    Dataset<Row> full = read(name).orderBy("id");
    List<List<Object>> want = new ArrayList<>();
    for (List<Object> r : rows(full)) {
      if (r.get(1).equals("cat1")) {
        want.add(row(r.get(0)));
      }
    }
    long fullBytes = bytesRead(full);

    Dataset<Row> pruned = read(name).where("cat = 'cat1'").select("id").orderBy("id");
    assertEquals(want, rows(pruned));
    String plan = explain(pruned);
    assertTrue(plan.contains("PushedFilters: [IsNotNull(cat), EqualTo(cat,cat1)]"), plan);
    assertTrue(plan.contains("Columns: [id]"), plan);
    long prunedBytes = bytesRead(pruned);
    assertTrue(
        prunedBytes > 0 && prunedBytes * 3 < fullBytes,
        "pruned and filtered read " + prunedBytes + " bytes, full read " + fullBytes);
  }

  @Test
  void limitIsPushedIntoOneEndpoint() {
    String name = logTable(Map.of("bucket.num", "3"));
    Dataset<Row> limited = read(name).limit(4);
    assertEquals(4, limited.collectAsList().size());
    assertTrue(explain(limited).contains("PushedLimit: 4"), explain(limited));
    assertEquals(1, scanNode(limited).inputRDD().getNumPartitions());
  }

  @Test
  void countReadsOneNarrowColumn() {
    String name = logTable(Map.of("bucket.num", "3"));
    // Else counted from the offsets (CountPushdownTest).
    Dataset<Row> all = read(name, Map.of("pushdown.count", "false"));
    assertEquals(30, all.count());
    assertEquals(30L, spark.sql("SELECT count(*) FROM fg." + name).first().getLong(0));
  }

  @Test
  void missingTableAndOptionFailClearly() {
    Exception e = assertThrows(Exception.class, () -> read("fluss.nope").collectAsList());
    assertTrue(messages(e).contains("nope"), messages(e));
    Exception noOption =
        assertThrows(
            Exception.class,
            () -> spark.read().format("fluxgate").option("endpoint", server.uri()).load());
    assertTrue(messages(noOption).contains("\"table\" option is missing"), messages(noOption));
    assertThrows(Exception.class, () -> spark.sql("SELECT * FROM fg.fluss.nope").collectAsList());
  }
}
