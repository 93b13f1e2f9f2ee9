package io.fluxgate.spark;

import static io.fluxgate.client.Rows.row;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.PartitionInfo;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.Trigger;
import org.junit.jupiter.api.Test;

/** Partitioned tables through Spark: CREATE TABLE ... PARTITIONED BY, pruning, streaming. */
class PartitionTest extends SparkServerTest {

  /** A day-partitioned log table (id, payload, dt), made through Spark SQL. */
  private static String dayTable() {
    String name = table("days");
    spark.sql(
        "CREATE TABLE fg."
            + name
            + " (id BIGINT, payload STRING, dt STRING) PARTITIONED BY (dt)"
            + " TBLPROPERTIES ('bucket.num' = '2')");
    return name;
  }

  /** n rows of each day, through an INSERT of Spark SQL. */
  private static void insertDays(String table, int n, String... days) {
    List<String> values = new ArrayList<>();
    for (String day : days) {
      for (int i = 0; i < n; i++) {
        values.add("(" + i + "L, repeat('x', 100), '" + day + "')");
      }
    }
    spark.sql("INSERT INTO fg." + table + " VALUES " + String.join(", ", values));
  }

  @Test
  void createTablePartitionedByIsAPartitionedTable() throws Exception {
    String name = dayTable();
    assertEquals(List.of("dt"), client.describeTable(name).partitionKeys());
    TableCatalog catalog = (TableCatalog) spark.sessionState().catalogManager().catalog("fg");
    String[] parts = name.split("\\.");
    Transform[] partitioning =
        catalog.loadTable(Identifier.of(new String[] {parts[0]}, parts[1])).partitioning();
    assertArrayEquals(new Transform[] {Expressions.identity("dt")}, partitioning);

    String keyed = table("keyed");
    spark.sql(
        "CREATE TABLE fg."
            + keyed
            + " (id BIGINT NOT NULL, region STRING NOT NULL, v INT) PARTITIONED BY (region)"
            + " TBLPROPERTIES ('primary.key' = 'id,region')");
    assertEquals(List.of("id", "region"), client.describeTable(keyed).primaryKey());
    assertEquals(List.of("region"), client.describeTable(keyed).partitionKeys());
  }

  @Test
  void aFilterOnThePartitionColumnReadsOnlyItsPartitions() {
    String name = dayTable();
    insertDays(name, 50, "20261201", "20261202", "20261203");
    assertEquals(
        List.of("20261201", "20261202", "20261203"),
        client.listPartitions(name).stream().map(PartitionInfo::partitionName).toList());

    Dataset<Row> full = spark.sql("SELECT * FROM fg." + name);
    assertEquals(150, full.collectAsList().size());
    Dataset<Row> oneDay = spark.sql("SELECT id, dt FROM fg." + name + " WHERE dt = '20261202'");
    List<List<Object>> rows = rows(oneDay);
    assertEquals(50, rows.size());
    assertTrue(rows.stream().allMatch(r -> r.get(1).equals("20261202")), rows.toString());
    assertTrue(explain(oneDay).contains("EqualTo(dt,20261202)"), explain(oneDay));
    long fullBytes = bytesRead(full);
    long oneBytes = bytesRead(oneDay);
    assertTrue(
        oneBytes > 0 && oneBytes * 2 < fullBytes,
        "one day read " + oneBytes + " bytes, three days " + fullBytes);
  }

  @Test
  void aWriteWithPartitionCreationOffFailsNamingTheMissingPartition() {
    String name = dayTable();
    Dataset<Row> rows = spark.sql("SELECT 1L AS id, 'p' AS payload, '20261209' AS dt");
    Exception e =
        assertThrows(
            Exception.class,
            () ->
                rows.write()
                    .format("fluxgate")
                    .option("endpoint", server.uri())
                    .option("table", name)
                    .option("client.writer.dynamic-create-partition.enabled", "false")
                    .mode("append")
                    .save());
    assertTrue(messages(e).contains("dt=20261209"), messages(e));
    assertEquals(List.of(), client.listPartitions(name));
  }

  @Test
  void aPartitionedPrimaryKeyTableIsUpserted() {
    String name = table("regions");
    spark.sql(
        "CREATE TABLE fg."
            + name
            + " (id BIGINT NOT NULL, region STRING NOT NULL, v INT) PARTITIONED BY (region)"
            + " TBLPROPERTIES ('primary.key' = 'id,region')");
    spark.sql("INSERT INTO fg." + name + " VALUES (1L, 'eu', 10), (1L, 'us', 20), (2L, 'eu', 30)");
    spark.sql("INSERT INTO fg." + name + " VALUES (1L, 'eu', 11)");
    assertEquals(
        List.of(row(1L, "eu", 11), row(1L, "us", 20), row(2L, "eu", 30)),
        rows(spark.sql("SELECT * FROM fg." + name + " ORDER BY id, region")));
  }

  @Test
  void aRunningStreamPicksUpPartitionsCreatedAfterItStarted() throws Exception {
    String name = dayTable();
    insertDays(name, 3, "20261201");
    Path out = Files.createTempDirectory("partition-stream");
    StreamingQuery q =
        spark
            .readStream()
            .format("fluxgate")
            .option("endpoint", server.uri())
            .option("table", name)
            .load()
            .writeStream()
            .format("parquet")
            .option("path", out.toString())
            .option(
                "checkpointLocation", Files.createTempDirectory("partition-checkpoint").toString())
            .trigger(Trigger.ProcessingTime(100))
            .start();
    try {
      q.processAllAvailable();
      assertEquals(List.of("20261201", "20261201", "20261201"), days(out));

      insertDays(name, 2, "20261202"); // a partition the running query has not seen
      insertDays(name, 1, "20261201");
      q.processAllAvailable();
      List<String> days = days(out);
      days.sort(null);
      assertEquals(
          List.of("20261201", "20261201", "20261201", "20261201", "20261202", "20261202"), days);
    } finally {
      q.stop();
    }
  }

  private static List<String> days(Path out) {
    return new ArrayList<>(
        spark.read().parquet(out.toString()).select("dt").as(Encoders.STRING()).collectAsList());
  }
}
