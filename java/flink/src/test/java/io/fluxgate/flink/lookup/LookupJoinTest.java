package io.fluxgate.flink.lookup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.flink.ServerExtension;
import io.fluxgate.flink.Sql;
import java.util.List;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Lookup joins (enrichment) against primary-key tables, by primary key and by prefix index. */
@Timeout(120)
public class LookupJoinTest {
  @RegisterExtension static final MiniClusterExtension CLUSTER = ServerExtension.cluster(4);

  @RegisterExtension
  static final ServerExtension SERVER = new ServerExtension("--default-bucket-num", "2");

  Sql sql;

  @BeforeAll
  static void createTables() throws Exception {
    try (Sql setup = new Sql(SERVER.uri())) {
      StreamTableEnvironment env = setup.env(true);
      env.executeSql(
          "CREATE TABLE fluss.customers (id INT, name STRING, city STRING,"
              + " PRIMARY KEY (id) NOT ENFORCED)");
      env.executeSql(
              "INSERT INTO fluss.customers VALUES (1, 'alice', 'paris'), (2, 'bob', 'oslo'),"
                  + " (3, 'carol', 'rome')")
          .await();
      env.executeSql(
          "CREATE TABLE fluss.members (team INT, id INT, name STRING,"
              + " PRIMARY KEY (team, id) NOT ENFORCED) WITH ('bucket.key'='team')");
      env.executeSql(
              "INSERT INTO fluss.members VALUES (1, 1, 'ann'), (1, 2, 'ben'), (1, 3, 'cat'),"
                  + " (2, 1, 'dan'), (3, 7, 'eve')")
          .await();
      env.executeSql("CREATE TABLE fluss.events_log (id INT, name STRING)");
    }
  }

  @AfterEach
  void closeCatalogs() throws Exception {
    if (sql != null) {
      sql.close();
    }
  }

  /** A streaming environment with the view orders(order_id, cust_id, ptime). */
  private StreamTableEnvironment withOrders() {
    sql = new Sql(SERVER.uri());
    StreamTableEnvironment env = sql.env(false);
    env.createTemporaryView(
        "orders",
        env.sqlQuery(
            "SELECT order_id, cust_id, PROCTIME() AS ptime FROM (VALUES (10, 1), (11, 2),"
                + " (12, 9), (13, 1), (14, CAST(NULL AS INT))) AS t (order_id, cust_id)"));
    return env;
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "",
        "/*+ OPTIONS('lookup.cache'='PARTIAL', 'lookup.partial-cache.max-rows'='100') */",
        "/*+ OPTIONS('lookup.async'='false') */",
        "/*+ OPTIONS('lookup.async'='false', 'lookup.cache'='PARTIAL',"
            + " 'lookup.partial-cache.max-rows'='100') */"
      })
  void enrichmentLeftJoinGivesNullsForMissingKeys(String hint) throws Exception {
    StreamTableEnvironment env = withOrders();
    String query =
        "SELECT o.order_id, c.name, c.city FROM orders AS o LEFT JOIN fluss.customers "
            + hint
            + " FOR SYSTEM_TIME AS OF o.ptime AS c ON o.cust_id = c.id";
    assertEquals(
        List.of(
            "+I[10, alice, paris]",
            "+I[11, bob, oslo]",
            "+I[12, null, null]",
            "+I[13, alice, paris]",
            "+I[14, null, null]"),
        Sql.rows(env, query));
    assertTrue(
        env.explainSql(query).contains("LookupJoin(table=[fg.fluss.customers]"),
        env.explainSql(query));
  }

  @Test
  void innerJoinDropsMissingKeys() throws Exception {
    StreamTableEnvironment env = withOrders();
    assertEquals(
        List.of("+I[10, alice]", "+I[11, bob]", "+I[13, alice]"),
        Sql.rows(
            env,
            "SELECT o.order_id, c.name FROM orders AS o JOIN fluss.customers"
                + " FOR SYSTEM_TIME AS OF o.ptime AS c ON o.cust_id = c.id"));
  }

  @Test
  void prefixIndexLookupReturnsEveryRowOfTheBucketKey() throws Exception {
    StreamTableEnvironment env = withOrders();
    assertEquals(
        List.of(
            "+I[10, ann]",
            "+I[10, ben]",
            "+I[10, cat]",
            "+I[11, dan]",
            "+I[12, null]",
            "+I[13, ann]",
            "+I[13, ben]",
            "+I[13, cat]",
            "+I[14, null]"),
        Sql.rows(
            env,
            "SELECT o.order_id, m.name FROM orders AS o LEFT JOIN fluss.members"
                + " FOR SYSTEM_TIME AS OF o.ptime AS m ON o.cust_id = m.team"));
    // A join key beyond the index filters the prefix's rows.
    assertEquals(
        List.of("+I[10, ben]", "+I[13, ben]"),
        Sql.rows(
            env,
            "SELECT o.order_id, m.name FROM orders AS o JOIN fluss.members"
                + " FOR SYSTEM_TIME AS OF o.ptime AS m ON o.cust_id = m.team AND m.name = 'ben'"));
  }

  @Test
  void joinKeysOutsideEveryIndexAreRefused() {
    StreamTableEnvironment env = withOrders();
    assertTrue(
        Sql.validationMessage(
                () ->
                    env.explainSql(
                        "SELECT * FROM orders AS o JOIN fluss.members FOR SYSTEM_TIME AS OF"
                            + " o.ptime AS m ON o.cust_id = m.id"))
            .contains(
                "the join keys [id] cover neither the primary key [team, id] nor the"
                    + " bucket-key prefix index [team]"));
    assertTrue(
        Sql.validationMessage(
                () ->
                    env.explainSql(
                        "SELECT * FROM orders AS o JOIN fluss.events_log FOR SYSTEM_TIME AS OF"
                            + " o.ptime AS e ON o.cust_id = e.id"))
            .contains("lookups need a primary-key table"));
    assertTrue(
        Sql.validationMessage(
                () ->
                    env.explainSql(
                        "SELECT * FROM orders AS o JOIN fluss.customers"
                            + " /*+ OPTIONS('lookup.cache'='FULL') */ FOR SYSTEM_TIME AS OF"
                            + " o.ptime AS c ON o.cust_id = c.id"))
            .contains("'lookup.cache'='FULL' is not supported"));
  }
}
