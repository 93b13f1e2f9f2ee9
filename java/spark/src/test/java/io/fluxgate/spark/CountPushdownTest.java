package io.fluxgate.spark;

import static io.fluxgate.client.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.Column;
import io.fluxgate.client.Rows;
import io.fluxgate.client.TableSpec;
import io.fluxgate.client.TableWriter;
import io.fluxgate.client.WriteMode;
import io.fluxgate.client.WriteRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A bare COUNT(*) of a log or primary-key table is answered by the server (table-stats) and equals
 * the count of a scan; anything else (a filter, a grouping, another aggregate, a WAL-image or
 * lake-enabled log table, a view) is counted by Spark from a scan.
 */
class CountPushdownTest extends SparkServerTest {
  private static final String PUSHED = "PushedAggregates: [COUNT(*)]";
  private static String log;
  private static String keyed;

  /** A 3-bucket log table of 25 rows in two writes; a primary-key table of 3 rows after updates. */
  @BeforeAll
  static void tables() {
    log = table("counted");
    client.createTable(
        TableSpec.of(log, Column.of("id", "BIGINT"), Column.of("cat", "STRING"))
            .withOptions(Map.of("bucket.num", "3")),
        false);
    List<List<Object>> rows = new ArrayList<>();
    for (long i = 0; i < 25; i++) {
      rows.add(row(i, i % 2 == 0 ? "even" : "odd"));
    }
    write(log, rows.subList(0, 10));
    write(log, rows.subList(10, 25));

    keyed = table("counted_keyed");
    client.createTable(
        TableSpec.of(keyed, Column.of("id", "BIGINT"), Column.of("cat", "STRING"))
            .withPrimaryKey("id"),
        false);
    write(keyed, List.of(row(1L, "a"), row(2L, "b"), row(3L, "c")));
    write(keyed, List.of(row(2L, "b2"), row(4L, "d"))); // an update and a new key: four rows
    try (TableWriter w = client.newWriter(WriteRequest.of(keyed).withMode(WriteMode.DELETE));
        VectorSchemaRoot batch =
            Rows.batch(allocator, Rows.schema(client, keyed), List.of(row(3L, null)))) {
      w.write(batch); // three rows
    }
  }

  @Test
  void countStarOfALogTableIsPushedAndEqualsTheScannedCount() {
    Dataset<Row> pushed = read(log).groupBy().count();
    assertTrue(explain(pushed).contains(PUSHED), explain(pushed));
    assertEquals(25L, pushed.first().getLong(0));
    assertEquals(25L, read(log).count());

    Dataset<Row> scanned = read(log, Map.of("pushdown.count", "false")).groupBy().count();
    assertFalse(explain(scanned).contains(PUSHED), explain(scanned));
    assertEquals(25L, scanned.first().getLong(0));
  }

  @Test
  void sqlCountThroughTheCatalogIsPushed() {
    Dataset<Row> count = spark.sql("SELECT count(*) AS n FROM fg." + log);
    assertTrue(explain(count).contains(PUSHED), explain(count));
    assertEquals(25L, count.first().getLong(0));
    assertEquals(25L, spark.sql("SELECT count(1) FROM fg." + log).first().getLong(0));
  }

  @Test
  void filteredGroupedAndOtherAggregatesAreCountedByASpark() {
    assertCountedBySpark(read(log).where("cat = 'even'").groupBy().count(), 13L);
    assertCountedBySpark(read(log).where("id % 5 = 0").groupBy().count(), 5L);
    assertCountedBySpark(read(log).selectExpr("count(cat)"), 25L);
    assertCountedBySpark(read(log).selectExpr("count(*)", "max(id)"), 25L);
    Dataset<Row> grouped = read(log).groupBy("cat").count().orderBy("cat");
    assertFalse(explain(grouped).contains(PUSHED), explain(grouped));
    assertEquals(List.of(row("even", 13L), row("odd", 12L)), rows(grouped));
  }

  @Test
  void countStarOfAPrimaryKeyTableIsItsCurrentRows() {
    Dataset<Row> pushed = spark.sql("SELECT count(*) FROM fg." + keyed);
    assertTrue(explain(pushed).contains(PUSHED), explain(pushed));
    assertEquals(3L, pushed.first().getLong(0));
    assertEquals(
        3L, read(keyed, Map.of("pushdown.count", "false")).groupBy().count().first().getLong(0));
  }

  @Test
  void walImageTablesAndViewsAreCountedBySpark() {
    String wal = table("counted_wal");
    client.createTable(
        TableSpec.of(wal, Column.of("id", "BIGINT"), Column.of("cat", "STRING"))
            .withPrimaryKey("id")
            .withOptions(Map.of("table.changelog.image", "wal")),
        false);
    write(wal, List.of(row(1L, "a"), row(2L, "b"), row(1L, "c")));
    assertCountedBySpark(read(wal).groupBy().count(), 2L);
    assertCountedBySpark(read(log + "$changelog").groupBy().count(), 25L);
  }

  @Test
  void lakeEnabledTablesAreCountedBySpark() {
    String lake = table("counted_lake");
    client.createTable(
        TableSpec.of(lake, Column.of("id", "BIGINT"), Column.of("cat", "STRING"))
            .withOptions(Map.of("table.datalake.enabled", "true")),
        false);
    write(lake, List.of(row(1L, "a"), row(2L, "b")));
    client.tierNow(lake);
    write(lake, List.of(row(3L, "c")));
    assertCountedBySpark(read(lake).groupBy().count(), 3L); // a union read: lake, then log
  }

  private static void assertCountedBySpark(Dataset<Row> count, long expected) {
    assertFalse(explain(count).contains(PUSHED), explain(count));
    assertEquals(expected, count.first().getLong(0));
  }
}
