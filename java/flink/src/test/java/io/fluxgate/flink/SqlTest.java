package io.fluxgate.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Reads and writes through Flink SQL on a MiniCluster against the real server: the stories as a
 * Flink user writes them, with exact expected results.
 */
@Timeout(90)
public class SqlTest {
  @RegisterExtension static final MiniClusterExtension CLUSTER = ServerExtension.cluster(4);

  static final ServerMetrics metrics = ServerMetrics.onFreePort();

  @RegisterExtension
  static final ServerExtension SERVER =
      new ServerExtension(metrics.flags("--default-bucket-num", "2"));

  /** A table environment in batch or streaming mode, with the catalog fg as current catalog. */
  /** The environments a test made, whose catalogs (and connections) close after it. */
  private final List<StreamTableEnvironment> envs = new ArrayList<>();

  @AfterEach
  void closeCatalogs() throws Exception {
    for (StreamTableEnvironment e : envs) {
      e.getCatalog("fg").orElseThrow().close();
    }
  }

  StreamTableEnvironment env(boolean batch) {
    Configuration conf = new Configuration();
    conf.set(
        ExecutionOptions.RUNTIME_MODE,
        batch ? RuntimeExecutionMode.BATCH : RuntimeExecutionMode.STREAMING);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    StreamTableEnvironment t = StreamTableEnvironment.create(env);
    t.executeSql("CREATE CATALOG fg WITH ('type'='fluxgate', 'endpoint'='" + SERVER.uri() + "')");
    t.executeSql("USE CATALOG fg");
    envs.add(t);
    return t;
  }

  static List<String> rows(StreamTableEnvironment env, String sql) throws Exception {
    List<String> out = new ArrayList<>();
    try (CloseableIterator<Row> it = env.executeSql(sql).collect()) {
      it.forEachRemaining(r -> out.add(r.toString()));
    }
    out.sort(null);
    return out;
  }

  @Test
  void logTableAppendsAndReadsBack() throws Exception {
    StreamTableEnvironment env = env(true);
    env.executeSql("CREATE TABLE fluss.events (id BIGINT, name STRING)");
    env.executeSql("INSERT INTO fluss.events VALUES (1, 'a'), (2, 'b'), (3, 'c')").await();
    assertEquals(
        List.of("+I[1, a]", "+I[2, b]", "+I[3, c]"), rows(env, "SELECT * FROM fluss.events"));
    assertEquals(List.of("+I[b]"), rows(env, "SELECT name FROM fluss.events WHERE id = 2"));
    assertEquals(1, rows(env, "SELECT * FROM fluss.events LIMIT 1").size());
  }

  @Test
  void everyTypeRoundTrips() throws Exception {
    StreamTableEnvironment env = env(true);
    String[] types = {
      "BOOLEAN",
      "TINYINT",
      "SMALLINT",
      "INT",
      "BIGINT",
      "FLOAT",
      "DOUBLE",
      "DECIMAL(20,4)",
      "STRING",
      "VARCHAR(20)",
      "CHAR(3)",
      "BYTES",
      "BINARY(2)",
      "DATE",
      "TIME(3)",
      "TIMESTAMP(3)",
      "TIMESTAMP(6)",
      "TIMESTAMP(9)",
      "TIMESTAMP_LTZ(3)",
      "TIMESTAMP_LTZ(6)",
      "ARRAY<INT>",
      "MAP<STRING, DOUBLE>",
      "ROW<a INT, b STRING>"
    };
    List<String> cols = new ArrayList<>();
    List<String> nullValues = new ArrayList<>();
    for (int i = 0; i < types.length; i++) {
      cols.add("c" + i + " " + types[i]);
      nullValues.add("CAST(NULL AS " + types[i] + ")");
    }
    String columns = String.join(", ", cols);
    env.executeSql("CREATE TABLE fluss.all_types (" + columns + ")");
    String values =
        "TRUE, CAST(-8 AS TINYINT), CAST(300 AS SMALLINT), -7, 9000000000, CAST(1.5 AS FLOAT),"
            + " 2.25, CAST(12345678.9012 AS DECIMAL(20,4)), 'héllo', 'v', 'abc', X'0102', X'0a0b',"
            + " DATE '2026-11-30', TIME '12:34:56.789', TIMESTAMP '2026-11-30 12:00:00.123',"
            + " TIMESTAMP '1969-12-31 23:59:59.123456', TIMESTAMP '2026-11-30 12:00:00.123456789',"
            + " TO_TIMESTAMP_LTZ(1764504000123, 3), TO_TIMESTAMP_LTZ(1764504000123, 3),"
            + " ARRAY[1, CAST(NULL AS INT), 3], MAP['x', 1.0, 'y', CAST(NULL AS DOUBLE)],"
            + " ROW(5, 'r')";
    String nulls = String.join(", ", nullValues);
    env.executeSql(
            "INSERT INTO fluss.all_types SELECT * FROM (VALUES ("
                + values
                + "), ("
                + nulls
                + ")) AS v")
        .await();
    List<String> expected = rows(env, "SELECT * FROM (VALUES (" + values + "), (" + nulls + "))");
    assertEquals(expected, rows(env, "SELECT * FROM fluss.all_types"));
  }

  @Test
  void primaryKeyTableUpsertsDeletesAndPartialUpdates() throws Exception {
    StreamTableEnvironment env = env(true);
    env.executeSql(
        "CREATE TABLE fluss.wide (id INT, a STRING, b STRING, PRIMARY KEY (id) NOT ENFORCED)");
    // The partial-update join: two inserts of disjoint columns give joined rows, no join state.
    env.executeSql("INSERT INTO fluss.wide (id, a) VALUES (1, 'a1'), (2, 'a2')").await();
    env.executeSql("INSERT INTO fluss.wide (id, b) VALUES (1, 'b1'), (3, 'b3')").await();
    assertEquals(
        List.of("+I[1, a1, b1]", "+I[2, a2, null]", "+I[3, null, b3]"),
        rows(env, "SELECT * FROM fluss.wide"));
    env.executeSql("INSERT INTO fluss.wide VALUES (2, 'a2x', 'b2x')").await();
    assertEquals(
        List.of("+I[1, a1, b1]", "+I[2, a2x, b2x]", "+I[3, null, b3]"),
        rows(env, "SELECT * FROM fluss.wide"));
  }

  /**
   * A write the server would refuse fails at planning, with Flink's exception and Fluss's words.
   */
  @Test
  void refusedPartialUpdateFailsAtPlanning() {
    StreamTableEnvironment env = env(true);
    env.executeSql(
        "CREATE TABLE fluss.firsts (id INT, a STRING, b STRING, PRIMARY KEY (id) NOT ENFORCED)"
            + " WITH ('table.merge-engine'='first_row')");
    String firstRow =
        validationMessage(() -> env.executeSql("INSERT INTO fluss.firsts (id, a) VALUES (1, 'x')"));
    assertTrue(
        firstRow.contains("uses the 'FIRST_ROW' merge engine which does not support partial"),
        firstRow);
  }

  @Test
  void aggregationMergeEngineSumsAndIgnoresDeletes() throws Exception {
    StreamTableEnvironment env = env(true);
    env.executeSql(
        "CREATE TABLE fluss.totals (k STRING, total BIGINT, last_note STRING,"
            + " PRIMARY KEY (k) NOT ENFORCED) WITH ('table.merge-engine'='aggregation',"
            + " 'fields.total.agg'='sum', 'fields.last_note.agg'='last_value_ignore_nulls')");
    env.executeSql("INSERT INTO fluss.totals VALUES ('x', 1, 'n1'), ('y', 10, 'm')").await();
    env.executeSql("INSERT INTO fluss.totals VALUES ('x', 2, CAST(NULL AS STRING)), ('x', 3, 'n3')")
        .await();
    assertEquals(List.of("+I[x, 6, n3]", "+I[y, 10, m]"), rows(env, "SELECT * FROM fluss.totals"));
  }

  @Test
  void unionReadIsExactWhilePartIsTiered() throws Exception {
    StreamTableEnvironment env = env(true);
    env.executeSql(
        "CREATE TABLE fluss.fact_lake (dim_a STRING, metric BIGINT)"
            + " WITH ('table.datalake.enabled'='true')");
    env.executeSql("INSERT INTO fluss.fact_lake VALUES ('a', 1), ('b', 2), ('a', 3)").await();
    try (io.fluxgate.client.FluxgateClient c =
        io.fluxgate.client.FluxgateClient.connect(SERVER.uri())) {
      c.tierNow("fluss.fact_lake");
    }
    env.executeSql("INSERT INTO fluss.fact_lake VALUES ('a', 10), ('c', 20)").await();
    assertEquals(
        List.of("+I[a, 14]", "+I[b, 2]", "+I[c, 20]"),
        rows(env, "SELECT dim_a, SUM(metric) FROM fluss.fact_lake GROUP BY dim_a"));
    assertEquals(
        List.of("+I[a, 4]", "+I[b, 2]"),
        rows(env, "SELECT dim_a, SUM(metric) FROM `fluss`.`fact_lake$lake` GROUP BY dim_a"));
  }

  @Test
  void badQueryOptionsAreNamed() throws Exception {
    StreamTableEnvironment env = env(false);
    env.executeSql("CREATE TABLE fluss.hinted (id BIGINT, PRIMARY KEY (id) NOT ENFORCED)");
    assertTrue(
        validationMessage(
                () -> env.explainSql("SELECT * FROM fluss.hinted /*+ OPTIONS('scan.nope'='1') */"))
            .contains("scan.nope"));
    long future = System.currentTimeMillis() + 3_600_000;
    assertTrue(
        validationMessage(
                () ->
                    env.explainSql(
                        "SELECT * FROM fluss.hinted /*+ OPTIONS('scan.startup.mode'='timestamp',"
                            + " 'scan.startup.timestamp'='"
                            + future
                            + "') */"))
            .contains("is in the future"));
    StreamTableEnvironment batch = env(true);
    assertTrue(
        validationMessage(
                () ->
                    batch.explainSql(
                        "SELECT * FROM fluss.hinted /*+ OPTIONS('scan.startup.mode'='earliest')"
                            + " */"))
            .contains("scan.startup.mode must be full"));
  }

  /**
   * scan.startup.timestamp as Fluss takes it: 'yyyy-MM-dd HH:mm:ss' in the session time zone, or
   * epoch milliseconds. A wall time 6 hours ahead of UTC is 4 hours past in UTC+10 (every row
   * written since is read) and 6 hours ahead in UTC (refused as in the future).
   */
  @Test
  void startupTimestampTakesLocalTimeInTheSessionZone() throws Exception {
    StreamTableEnvironment env = env(true);
    env.executeSql("CREATE TABLE fluss.since (id BIGINT)");
    env.executeSql("INSERT INTO fluss.since VALUES (1), (2)").await();
    String wallTime =
        java.time.LocalDateTime.now(java.time.ZoneOffset.UTC)
            .plusHours(6)
            .format(java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss"));
    String query =
        "SELECT id FROM fluss.since /*+ OPTIONS('scan.startup.mode'='timestamp',"
            + " 'scan.startup.timestamp'='"
            + wallTime
            + "') */";
    env.getConfig().set("table.local-time-zone", "Etc/GMT-10"); // UTC+10
    assertEquals(List.of("+I[1]", "+I[2]"), rows(env, query));
    env.getConfig().set("table.local-time-zone", "UTC");
    assertTrue(validationMessage(() -> env.explainSql(query)).contains("is in the future"));
    assertEquals(
        List.of("+I[1]", "+I[2]"),
        rows(env, query.replace(wallTime, String.valueOf(System.currentTimeMillis() - 3_600_000))));
  }

  /** The messages of the ValidationExceptions in what action throws (Flink wraps them). */
  private static String validationMessage(org.junit.jupiter.api.function.Executable action) {
    Throwable thrown = org.junit.jupiter.api.Assertions.assertThrows(Throwable.class, action);
    StringBuilder messages = new StringBuilder();
    for (Throwable c = thrown; c != null; c = c.getCause()) {
      if (c instanceof org.apache.flink.table.api.ValidationException) {
        messages.append(c.getMessage()).append('\n');
      }
    }
    if (messages.isEmpty()) {
      throw new AssertionError("no ValidationException in " + thrown, thrown);
    }
    return messages.toString();
  }

  @Test
  void explainShowsPushdown() throws Exception {
    StreamTableEnvironment env = env(true);
    env.executeSql("CREATE TABLE fluss.pushed (id BIGINT, name STRING, extra STRING)");
    String plan = env.explainSql("SELECT name FROM fluss.pushed WHERE id > 5 LIMIT 3");
    assertTrue(plan.contains("filter=[>(id, 5"), plan);
    assertTrue(plan.contains("project=[name"), plan);
    assertTrue(plan.contains("limit=[3]"), plan);
  }

  @Test
  void wholePrimaryKeyEqualityInABatchQueryIsAPointLookup() throws Exception {
    StreamTableEnvironment env = env(true);
    env.executeSql(
        "CREATE TABLE fluss.users (id BIGINT, region STRING, name STRING,"
            + " PRIMARY KEY (id, region) NOT ENFORCED)");
    env.executeSql("INSERT INTO fluss.users VALUES (1, 'eu', 'a'), (2, 'eu', 'b'), (2, 'us', 'c')")
        .await();
    String point = "SELECT name FROM fluss.users WHERE id = 2 AND region = 'us'";
    // The whole key condition is in the source; nothing is left for Flink to filter.
    String plan = env.explainSql(point);
    assertTrue(plan.contains("filter=[and(=(id, 2"), plan);
    assertTrue(!plan.contains("Calc("), plan);
    double keys = metrics.sum("fluxgate_lookup_keys_total", "fluss.users");
    double scanned = metrics.sum("fluxgate_rows_read_total", "fluss.users");
    assertEquals(List.of("+I[c]"), rows(env, point));
    // One key looked up, no row scanned.
    assertEquals(keys + 1, metrics.sum("fluxgate_lookup_keys_total", "fluss.users"));
    assertEquals(scanned, metrics.sum("fluxgate_rows_read_total", "fluss.users"));
    assertEquals(
        List.of(), rows(env, "SELECT name FROM fluss.users WHERE id = 3 AND region = 'us'"));
    // Other conditions stay in Flink, on the looked-up row.
    assertEquals(
        List.of(),
        rows(env, "SELECT name FROM fluss.users WHERE id = 2 AND region = 'us' AND name <> 'c'"));
    // Part of the key is a scan.
    keys = metrics.sum("fluxgate_lookup_keys_total", "fluss.users");
    assertEquals(List.of("+I[b]", "+I[c]"), rows(env, "SELECT name FROM fluss.users WHERE id = 2"));
    assertEquals(keys, metrics.sum("fluxgate_lookup_keys_total", "fluss.users"));
  }

  @Test
  void prunedFilteredLimitedReadIsPushedAndReadsFewerBytes() throws Exception {
    StreamTableEnvironment env = env(true);
    env.executeSql("CREATE TABLE fluss.pruned (id BIGINT, payload STRING)");
    // Four writes, four batches per bucket with disjoint id ranges: statistics can rule some out.
    for (int w = 0; w < 4; w++) {
      env.executeSql(
              "INSERT INTO fluss.pruned SELECT CAST(id AS BIGINT), REPEAT('x', 200) FROM"
                  + " (VALUES "
                  + String.join(
                      ", ",
                      java.util.stream.IntStream.range(w * 100, w * 100 + 100)
                          .mapToObj(i -> "(" + i + ")")
                          .toList())
                  + ") AS v(id)")
          .await();
    }
    String pruned = "SELECT id FROM fluss.pruned WHERE id >= 350 LIMIT 10";
    String plan = env.explainSql(pruned);
    assertTrue(plan.contains("filter=[>=(id, 350"), plan);
    assertTrue(plan.contains("project=[id]"), plan);
    assertTrue(plan.contains("limit=[10]"), plan);

    double[] full =
        bytesRead(() -> assertEquals(400, rows(env, "SELECT * FROM fluss.pruned").size()));
    double[] less = bytesRead(() -> assertEquals(10, rows(env, pruned).size()));
    assertTrue(less[0] < full[0] / 4, "Arrow bytes sent: " + less[0] + " vs " + full[0]);
    assertTrue(less[1] < full[1], "log bytes read: " + less[1] + " vs " + full[1]);
  }

  interface Query {
    void run() throws Exception;
  }

  /** What the server counted for fluss.pruned while q ran: Arrow bytes sent, log bytes read. */
  static double[] bytesRead(Query q) throws Exception {
    double sent = metrics.sum("fluxgate_bytes_read_total", "fluss.pruned");
    double log = metrics.sum("fluxgate_log_bytes_read_total", "fluss.pruned");
    q.run();
    return new double[] {
      metrics.sum("fluxgate_bytes_read_total", "fluss.pruned") - sent,
      metrics.sum("fluxgate_log_bytes_read_total", "fluss.pruned") - log
    };
  }

  @Test
  void changelogModeFollowsTheTableOptions() throws Exception {
    StreamTableEnvironment env = env(false);
    String[][] cases = {
      {"", "[I,UB,UA,D]"},
      {"'table.merge-engine'='first_row'", "[I]"},
      {"'table.delete.behavior'='ignore'", "[I,UB,UA]"},
      {"'table.delete.behavior'='disable'", "[I,UB,UA]"},
      {
        "'table.merge-engine'='versioned', 'table.merge-engine.versioned.ver-column'='v'",
        "[I,UB,UA]"
      },
      {"'table.merge-engine'='aggregation', 'fields.v.agg'='sum'", "[I,UB,UA]"},
      {"'table.changelog.image'='wal'", "[I,UA,D]"},
    };
    for (int i = 0; i < cases.length; i++) {
      String table = "fluss.modes_" + i;
      env.executeSql(
          "CREATE TABLE "
              + table
              + " (id INT, v BIGINT, PRIMARY KEY (id) NOT ENFORCED)"
              + (cases[i][0].isEmpty() ? "" : " WITH (" + cases[i][0] + ")"));
      String plan =
          env.explainSql(
              "SELECT * FROM " + table, org.apache.flink.table.api.ExplainDetail.CHANGELOG_MODE);
      assertTrue(plan.contains("changelogMode=" + cases[i][1]), cases[i][0] + ":\n" + plan);
    }
  }

  @Test
  void countStarOfALogTableIsAnsweredByTheServer() throws Exception {
    StreamTableEnvironment env = env(true);
    env.executeSql("CREATE TABLE fluss.counted (id BIGINT)");
    env.executeSql("INSERT INTO fluss.counted VALUES (1), (2), (3), (4), (5)").await();
    env.executeSql("INSERT INTO fluss.counted VALUES (6), (7), (8), (9), (10), (11), (12)").await();
    String count = "SELECT COUNT(*) FROM fluss.counted";
    String plan = env.explainSql(count);
    assertTrue(plan.contains("aggregates=[grouping=[], aggFunctions=[Count"), plan);
    double scanned = metrics.sum("fluxgate_rows_read_total", "fluss.counted");
    assertEquals(List.of("+I[12]"), rows(env, count));
    assertEquals(scanned, metrics.sum("fluxgate_rows_read_total", "fluss.counted"));
    // With a filter it is a scan, and still exact.
    assertEquals(List.of("+I[4]"), rows(env, "SELECT COUNT(*) FROM fluss.counted WHERE id > 8"));
    assertTrue(metrics.sum("fluxgate_rows_read_total", "fluss.counted") > scanned);
    // From the latest offset a batch read has no rows: that is not what the offsets count.
    assertEquals(
        List.of("+I[0]"),
        rows(
            env,
            "SELECT COUNT(*) FROM fluss.counted /*+ OPTIONS('scan.startup.mode'='latest') */"));
  }

  @Test
  void countStarOfAPrimaryKeyTableIsAnsweredByTheServer() throws Exception {
    StreamTableEnvironment env = env(true);
    env.executeSql(
        "CREATE TABLE fluss.kcounted (id BIGINT, v STRING, PRIMARY KEY (id) NOT ENFORCED)");
    env.executeSql("INSERT INTO fluss.kcounted VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
        .await();
    env.executeSql("INSERT INTO fluss.kcounted VALUES (1, 'a2'), (5, 'e')").await();
    // DELETE FROM takes a table environment made in batch mode.
    StreamTableEnvironment modify =
        StreamTableEnvironment.create(
            StreamExecutionEnvironment.getExecutionEnvironment(),
            EnvironmentSettings.inBatchMode());
    modify.executeSql(
        "CREATE CATALOG fg WITH ('type'='fluxgate', 'endpoint'='" + SERVER.uri() + "')");
    envs.add(modify);
    modify.executeSql("DELETE FROM fg.fluss.kcounted WHERE id = 2").await();
    String count = "SELECT COUNT(*) FROM fluss.kcounted";
    String plan = env.explainSql(count);
    assertTrue(plan.contains("aggregates=[grouping=[], aggFunctions=[Count"), plan);
    double scanned = metrics.sum("fluxgate_rows_read_total", "fluss.kcounted");
    assertEquals(List.of("+I[4]"), rows(env, count));
    assertEquals(scanned, metrics.sum("fluxgate_rows_read_total", "fluss.kcounted"));

    // A WAL-image table keeps no count: Flink counts a scan.
    env.executeSql(
        "CREATE TABLE fluss.wcounted (id BIGINT, PRIMARY KEY (id) NOT ENFORCED)"
            + " WITH ('table.changelog.image'='wal')");
    env.executeSql("INSERT INTO fluss.wcounted VALUES (1), (2), (1)").await();
    String walCount = "SELECT COUNT(*) FROM fluss.wcounted";
    String walPlan = env.explainSql(walCount);
    assertTrue(!walPlan.contains("aggFunctions=[Count"), walPlan);
    assertEquals(List.of("+I[2]"), rows(env, walCount));
  }

  @Test
  void streamingChangelogFeedsExactGroupBy() throws Exception {
    StreamTableEnvironment batch = env(true);
    batch.executeSql(
        "CREATE TABLE fluss.orders (id INT, shop STRING, amount BIGINT,"
            + " PRIMARY KEY (id) NOT ENFORCED)");
    batch.executeSql(
        "CREATE TABLE fluss.shop_totals (shop STRING, total BIGINT, PRIMARY KEY (shop) NOT"
            + " ENFORCED)");
    batch
        .executeSql("INSERT INTO fluss.orders VALUES (1, 's1', 10), (2, 's1', 20), (3, 's2', 5)")
        .await();
    // Updates and a delete: an exact GROUP BY needs the -U/+U/-D of the primary-key table.
    batch.executeSql("INSERT INTO fluss.orders VALUES (1, 's1', 15), (3, 's1', 5)").await();

    StreamTableEnvironment streaming = env(false);
    TableResult job =
        streaming.executeSql(
            "INSERT INTO fluss.shop_totals SELECT shop, SUM(amount) FROM fluss.orders GROUP BY"
                + " shop");
    try {
      // Order 1 went from 10 to 15 and order 3 moved to s1: without the -U images s1 would be
      // 50 and s2 would keep 5; with them s2's group empties and Flink deletes its row.
      List<String> want = List.of("+I[s1, 40]");
      long deadline = System.currentTimeMillis() + 60_000;
      List<String> got = List.of();
      while (System.currentTimeMillis() < deadline) {
        got = rows(batch, "SELECT * FROM fluss.shop_totals");
        if (got.equals(want)) {
          break;
        }
        Thread.onSpinWait();
      }
      assertEquals(want, got);
    } finally {
      job.getJobClient().orElseThrow().cancel().get();
    }
  }
}
