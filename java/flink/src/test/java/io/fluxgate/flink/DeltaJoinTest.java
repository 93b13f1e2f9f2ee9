package io.fluxgate.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The delta join (FLIP-486): each side's changes look the other table up by index instead of Flink
 * keeping both streams in state, which the catalog's indexes and the async lookups allow.
 */
@Timeout(150)
public class DeltaJoinTest {
  @RegisterExtension static final MiniClusterExtension CLUSTER = ServerExtension.cluster(4);

  @RegisterExtension
  static final ServerExtension SERVER = new ServerExtension("--default-bucket-num", "2");

  private static final String JOIN =
      "INSERT INTO fluss.fact_dim_join SELECT fact_cdc.id, fact_cdc.dim_a, fact_cdc.metric,"
          + " dim_cdc.name FROM fluss.fact_cdc INNER JOIN fluss.dim_cdc"
          + " ON fact_cdc.dim_a = dim_cdc.dim_a";

  Sql sql;

  @AfterEach
  void closeCatalogs() throws Exception {
    sql.close();
  }

  private StreamTableEnvironment streaming() {
    return sql.env(false, 2, Map.of("table.optimizer.delta-join.strategy", "FORCE"));
  }

  @Test
  void deltaJoinKeepsTheTargetEqualToTheInnerJoin() throws Exception {
    sql = new Sql(SERVER.uri());
    StreamTableEnvironment batch = sql.env(true);
    batch.executeSql(
        "CREATE TABLE fluss.fact_cdc (id INT, dim_a STRING, metric BIGINT,"
            + " PRIMARY KEY (dim_a, id) NOT ENFORCED)"
            + " WITH ('bucket.key'='dim_a', 'table.delete.behavior'='ignore')");
    batch.executeSql(
        "CREATE TABLE fluss.dim_cdc (dim_a STRING, name STRING, PRIMARY KEY (dim_a) NOT ENFORCED)"
            + " WITH ('table.delete.behavior'='ignore')");
    batch.executeSql(
        "CREATE TABLE fluss.fact_dim_join (id INT, dim_a STRING, metric BIGINT, name STRING,"
            + " PRIMARY KEY (dim_a, id) NOT ENFORCED)");

    StreamTableEnvironment env = streaming();
    String plan = env.explainSql(JOIN);
    assertTrue(plan.contains("DeltaJoin("), plan);
    TableResult job = env.executeSql(JOIN);
    try {
      // Interleaved: facts before their dimension, dimensions before their facts, updates.
      insert(batch, "fact_cdc", "(1, 'a', 10), (2, 'b', 20)");
      insert(batch, "dim_cdc", "('a', 'A1'), ('c', 'C1')");
      insert(batch, "fact_cdc", "(3, 'c', 30), (4, 'a', 40), (5, 'd', 50)");
      insert(batch, "dim_cdc", "('b', 'B1'), ('a', 'A2')");
      insert(batch, "fact_cdc", "(1, 'a', 11)");
      List<String> expected =
          Sql.rows(
              batch,
              "SELECT f.id, f.dim_a, f.metric, d.name FROM fluss.fact_cdc AS f"
                  + " JOIN fluss.dim_cdc AS d ON f.dim_a = d.dim_a");
      assertEquals(
          List.of("+I[1, a, 11, A2]", "+I[2, b, 20, B1]", "+I[3, c, 30, C1]", "+I[4, a, 40, A2]"),
          expected);
      assertEquals(expected, awaitRows(batch, "SELECT * FROM fluss.fact_dim_join", expected));
    } finally {
      job.getJobClient().orElseThrow().cancel().get();
    }
  }

  @Test
  void aJoinOffTheIndexesIsRefusedWithFlinksReason() {
    sql = new Sql(SERVER.uri());
    StreamTableEnvironment batch = sql.env(true);
    batch.executeSql(
        "CREATE TABLE fluss.facts2 (id INT, dim_a STRING, PRIMARY KEY (id) NOT ENFORCED)"
            + " WITH ('table.delete.behavior'='ignore')");
    batch.executeSql(
        "CREATE TABLE fluss.dims2 (dim_a STRING, name STRING, PRIMARY KEY (dim_a) NOT ENFORCED)"
            + " WITH ('table.delete.behavior'='ignore')");
    batch.executeSql(
        "CREATE TABLE fluss.joined2 (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED)");
    StreamTableEnvironment env = streaming();
    // facts2 has no index on dim_a, so a dimension change cannot look its facts up.
    String failure =
        Sql.failure(
            () ->
                env.explainSql(
                    "INSERT INTO fluss.joined2 SELECT f.id, d.name FROM fluss.facts2 AS f"
                        + " JOIN fluss.dims2 AS d ON f.dim_a = d.dim_a"));
    assertTrue(failure.contains("doesn't support to do delta join optimization"), failure);
  }

  private static void insert(StreamTableEnvironment batch, String table, String values)
      throws Exception {
    batch.executeSql("INSERT INTO fluss." + table + " VALUES " + values).await();
  }

  /** The rows of a query once they equal expected, or the last ones read after a minute. */
  private static List<String> awaitRows(
      StreamTableEnvironment batch, String query, List<String> expected) throws Exception {
    Instant deadline = Instant.now().plus(Duration.ofMinutes(1));
    List<String> rows = Sql.rows(batch, query);
    while (!rows.equals(expected) && Instant.now().isBefore(deadline)) {
      rows = Sql.rows(batch, query);
    }
    return rows;
  }
}
