package io.fluxgate.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.Column;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.FluxgateServer;
import io.fluxgate.client.Rows;
import io.fluxgate.client.TableSpec;
import io.fluxgate.client.TableWriter;
import io.fluxgate.client.WriteMode;
import io.fluxgate.client.WriteRequest;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Spark with Iceberg's own Spark runtime reads the lake through the Iceberg REST catalog that
 * fluxgate serves on its HTTP address, equal to {@code t$lake} read through the connector. A server
 * of its own: the shared one serves no HTTP.
 */
class LakeRestCatalogTest extends SparkServerTest {
  private static FluxgateServer lakeServer;
  private static FluxgateClient lakeClient;
  private static Path lakeDir;

  @BeforeAll
  static void startServerWithCatalog() throws IOException, InterruptedException {
    int http;
    try (ServerSocket s = new ServerSocket(0)) {
      http = s.getLocalPort();
    }
    Path dir = Files.createTempDirectory("fluxgate-spark-lake");
    lakeDir = dir.resolve("data").resolve("lake");
    lakeServer = FluxgateServer.start(dir, "--http", "127.0.0.1:" + http);
    lakeClient = FluxgateClient.connect(lakeServer.uri());
    spark.conf().set("spark.sql.catalog.lake", "org.apache.iceberg.spark.SparkCatalog");
    spark.conf().set("spark.sql.catalog.lake.type", "rest");
    spark.conf().set("spark.sql.catalog.lake.uri", "http://127.0.0.1:" + http + "/iceberg");
  }

  @AfterAll
  static void stopServer() throws InterruptedException {
    lakeClient.close();
    lakeServer.close();
  }

  @Test
  void logTable() {
    String name = "fluss.clicks";
    lakeClient.createTable(
        TableSpec.of(name, Column.of("id", "BIGINT"), Column.of("page", "STRING"))
            .withOptions(Map.of("table.datalake.enabled", "true", "bucket.num", "2")),
        false);
    write(name, WriteMode.APPEND, List.of(List.of(1L, "home"), List.of(2L, "docs")));
    lakeClient.tierNow(name);
    write(name, WriteMode.APPEND, List.of(List.of(3L, "blog")));
    lakeClient.tierNow(name);

    assertEquals(lake(name), rows(spark.sql("SELECT * FROM lake." + name + " ORDER BY id")));
    assertEquals(3, lake(name).size());
  }

  /** Spark applies the lake's deletes: each live key's latest row. */
  @Test
  void primaryKeyTableAfterAnUpdateAndADelete() {
    String name = "fluss.users";
    lakeClient.createTable(
        TableSpec.of(name, Column.notNull("id", "BIGINT"), Column.of("name", "STRING"))
            .withPrimaryKey("id")
            .withOptions(Map.of("table.datalake.enabled", "true")),
        false);
    write(
        name,
        WriteMode.UPSERT,
        List.of(List.of(1L, "ann"), List.of(2L, "bob"), List.of(3L, "cid")));
    lakeClient.tierNow(name);
    write(name, WriteMode.UPSERT, List.of(List.of(1L, "anne")));
    write(name, WriteMode.DELETE, List.of(Arrays.asList(2L, null)));
    lakeClient.tierNow(name);

    List<List<Object>> got = rows(spark.sql("SELECT * FROM lake." + name + " ORDER BY id"));
    assertEquals(lake(name), got);
    assertEquals(
        List.of(List.of(1L, "anne"), List.of(3L, "cid")),
        rows(spark.sql("SELECT id, name FROM lake." + name + " ORDER BY id")));
  }

  /**
   * A table partitioned by keys whose Iceberg partition paths need escapes (a timestamp's ':', an
   * exponent's '+', base64's '/' and '+'): Spark finds every file the manifests name. Spark has no
   * TIME type; pyiceberg and DuckDB read every key type (python/tests).
   */
  @Test
  void partitionPathsNeedingEscapes() {
    String name = "fluss.visits";
    lakeClient.createTable(
        TableSpec.of(
                name,
                Column.of("id", "BIGINT"),
                Column.notNull("ts", "TIMESTAMP(6)"),
                Column.notNull("ltz", "TIMESTAMP_LTZ(3)"),
                Column.notNull("d", "DOUBLE"),
                Column.notNull("b", "BYTES"),
                Column.notNull("dt", "DATE"))
            .withPartitionKeys("ts", "ltz", "d", "b", "dt")
            .withOptions(Map.of("table.datalake.enabled", "true", "bucket.num", "1")),
        false);
    write(
        name,
        WriteMode.APPEND,
        List.of(
            List.of(
                1L, 1_796_119_200_123_456L, 1_796_119_200_123L, 1e300, new byte[] {-5, -1}, 20_788),
            List.of(2L, 0L, -1L, -2.5e-7, new byte[] {0, 7}, -1)));
    lakeClient.tierNow(name);

    String select =
        "SELECT id, CAST(ts AS STRING), CAST(ltz AS STRING), d, hex(b), CAST(dt AS STRING) FROM ";
    lakeDataFrame(name).createOrReplaceTempView("visits_lake");
    List<List<Object>> want = rows(spark.sql(select + "visits_lake ORDER BY id"));
    assertEquals(2, want.size());
    assertEquals(want, rows(spark.sql(select + "lake." + name + " ORDER BY id")));
  }

  /**
   * An INSERT through the read-only catalog fails at its first file: the served metadata's write
   * locations have a scheme no file system has, so nothing is left in fluxgate's lake (Spark checks
   * the catalog's endpoints only at commit, after writing its files).
   */
  @Test
  void insertFailsBeforeWritingAFile() throws IOException {
    String name = "fluss.refused";
    lakeClient.createTable(
        TableSpec.of(name, Column.of("id", "BIGINT"))
            .withOptions(Map.of("table.datalake.enabled", "true")),
        false);
    write(name, WriteMode.APPEND, List.of(List.of(1L)));
    lakeClient.tierNow(name);
    List<Path> before = files(lakeDir.resolve("fluss").resolve("refused"));
    Exception refused =
        assertThrows(
            Exception.class,
            () ->
                spark.sql(
                    "INSERT INTO lake."
                        + name
                        + " VALUES (2, 0, 1, TIMESTAMP '2026-12-01 00:00:00 UTC')"));
    assertTrue(
        String.valueOf(refused).contains("fluxgate-read-only")
            || String.valueOf(refused.getCause()).contains("fluxgate-read-only"),
        () -> "the refusal does not name the read-only location: " + refused);
    assertEquals(before, files(lakeDir.resolve("fluss").resolve("refused")));
  }

  private static List<Path> files(Path dir) throws IOException {
    try (Stream<Path> walk = Files.walk(dir)) {
      return walk.filter(Files::isRegularFile).sorted().toList();
    }
  }

  private static void write(String table, WriteMode mode, List<List<Object>> rows) {
    try (VectorSchemaRoot batch = Rows.batch(allocator, Rows.schema(lakeClient, table), rows);
        TableWriter w = lakeClient.newWriter(WriteRequest.of(table).withMode(mode))) {
      w.write(batch);
    }
  }

  /** t$lake read through the connector, ordered by the first column. */
  private static List<List<Object>> lake(String table) {
    return rows(lakeDataFrame(table).orderBy("id"));
  }

  private static Dataset<Row> lakeDataFrame(String table) {
    return spark
        .read()
        .format("fluxgate")
        .option("endpoint", lakeServer.uri())
        .option("table", table + "$lake")
        .load();
  }
}
