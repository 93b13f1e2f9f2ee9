package io.fluxgate.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.table.api.ExplainDetail;
import org.apache.flink.table.api.StatementSet;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.functions.ScalarFunction;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The global dictionary: a lookup join with insert-if-not-exists gives every key a dense id, the
 * same from every subtask and across restarts, and rbm32 bitmaps of those ids count exactly.
 */
@Timeout(180)
public class DictionaryTest {
  @RegisterExtension static final MiniClusterExtension CLUSTER = ServerExtension.cluster(4);

  @RegisterExtension
  static final ServerExtension SERVER = new ServerExtension("--default-bucket-num", "4");

  private static final String DICTIONARY_JOIN =
      " FROM fact LEFT JOIN dim_mapping /*+ OPTIONS('lookup.insert-if-not-exists'='true') */"
          + " FOR SYSTEM_TIME AS OF fact.ptime ON fact.dim_b = dim_mapping.dim_b";

  final Sql sql = new Sql(SERVER.uri());

  @AfterEach
  void closeCatalogs() throws Exception {
    sql.close();
  }

  /** Fails the job once, at its n-th row, so that it restarts and replays its input. */
  public static final class FailOnce extends ScalarFunction {
    static final AtomicInteger seen = new AtomicInteger();
    static final AtomicBoolean failed = new AtomicBoolean();
    static volatile int at = -1;

    public boolean eval(String key) {
      if (seen.incrementAndGet() == at && failed.compareAndSet(false, true)) {
        throw new IllegalStateException("injected failure at row " + at);
      }
      return true;
    }
  }

  /**
   * A streaming job of parallelism 4 that restarts on failure, with the view fact of rows keys
   * k{from}..k{from+span-1}, round robin. The datagen sequence splits its range among the 4 source
   * subtasks, so that each subtask looks up every key.
   */
  private StreamTableEnvironment factsEnv(int from, int span, int rows) {
    StreamTableEnvironment env =
        sql.env(
            false,
            4,
            Map.of(
                "restart-strategy.type", "fixed-delay",
                "restart-strategy.fixed-delay.attempts", "2",
                "restart-strategy.fixed-delay.delay", "0 s"));
    env.createTemporarySystemFunction("fail_once", FailOnce.class);
    env.executeSql(
        "CREATE TEMPORARY TABLE default_catalog.default_database.seq (n BIGINT) WITH"
            + " ('connector'='datagen', 'fields.n.kind'='sequence', 'fields.n.start'='0',"
            + " 'fields.n.end'='"
            + (rows - 1)
            + "', 'number-of-rows'='"
            + rows
            + "')");
    env.createTemporaryView(
        "fact",
        env.sqlQuery(
            "SELECT dim_b, PROCTIME() AS ptime FROM (SELECT CONCAT('k', CAST("
                + from
                + " + n % "
                + span
                + " AS STRING)) AS dim_b FROM default_catalog.default_database.seq)"
                + " WHERE fail_once(dim_b)"));
    return env;
  }

  @Test
  void dictionaryGivesDenseStableIdsAndBitmapsCountExactly() throws Exception {
    StreamTableEnvironment ddl = sql.env(true);
    ddl.executeSql(
        "CREATE TABLE fluss.dim_mapping (dim_b STRING, uid_int32 INT,"
            + " PRIMARY KEY (dim_b) NOT ENFORCED) WITH ('auto-increment.fields'='uid_int32')");
    ddl.executeSql("CREATE TABLE fluss.assigned (dim_b STRING, uid INT)");
    ddl.executeSql(
        "CREATE TABLE fluss.uv (tag STRING, uids BYTES, PRIMARY KEY (tag) NOT ENFORCED)"
            + " WITH ('table.merge-engine'='aggregation', 'fields.uids.agg'='rbm32')");

    // First job: 150 keys in 600 rows, failing once in the middle and restarting from scratch.
    FailOnce.seen.set(0);
    FailOnce.failed.set(false);
    FailOnce.at = 300;
    run(factsEnv(0, 150, 600));
    assertTrue(FailOnce.failed.get(), "the job never failed");
    Map<String, Integer> ids = assigned(ddl);
    assertEquals(150, ids.size());
    assertEquals(range(1, 150), new TreeSet<>(ids.values()));

    // A second job: 100 keys seen before, 50 new ones.
    FailOnce.at = -1;
    run(factsEnv(50, 150, 600));
    Map<String, Integer> after = assigned(ddl);
    assertEquals(200, after.size());
    ids.forEach((k, id) -> assertEquals(id, after.get(k), "the id of " + k + " changed"));
    assertEquals(range(1, 200), new TreeSet<>(after.values()));

    // The bitmaps of the ids count the distinct keys exactly.
    assertEquals(
        List.of("+I[200, 200]"),
        Sql.rows(
            ddl,
            "SELECT rb_cardinality(uids), (SELECT COUNT(DISTINCT dim_b) FROM fluss.assigned)"
                + " FROM fluss.uv WHERE tag = 'all'"));
    assertEquals(
        List.of("+I[200]"),
        Sql.rows(ddl, "SELECT rb_cardinality(rb_build_agg(uid)) FROM fluss.assigned"));
    assertEquals(
        List.of("+I[200, 50, true, false]"),
        Sql.rows(
            ddl,
            "SELECT rb_cardinality(rb_or(a, b)), rb_cardinality(rb_and(a, b)),"
                + " rb_contains(a, 1), rb_contains(b, 1) FROM (SELECT"
                + " rb_build_agg(CASE WHEN uid <= 150 THEN uid END) AS a,"
                + " rb_build_agg(CASE WHEN uid > 100 THEN uid END) AS b FROM fluss.assigned)"));
  }

  /**
   * One subtask's new keys get ids in the order they arrive, so that a rerun of a job gives the
   * same ids: k0, k1, ... get 1, 2, ... With asynchronous lookups (many keys in flight).
   */
  @Test
  void newKeysGetIdsInInputOrder() throws Exception {
    int keys = 500;
    StreamTableEnvironment ddl = sql.env(true);
    ddl.executeSql(
        "CREATE TABLE fluss.ordered_dim (k STRING, id INT, PRIMARY KEY (k) NOT ENFORCED)"
            + " WITH ('auto-increment.fields'='id', 'bucket.num'='1')");
    ddl.executeSql("CREATE TABLE fluss.ordered_ids (n BIGINT, id INT)");
    StreamTableEnvironment env = sql.env(false, 1, Map.of());
    env.executeSql(
        "CREATE TEMPORARY TABLE default_catalog.default_database.keys_in_order (n BIGINT) WITH"
            + " ('connector'='datagen', 'fields.n.kind'='sequence', 'fields.n.start'='0',"
            + " 'fields.n.end'='"
            + (keys - 1)
            + "')");
    env.executeSql(
            "INSERT INTO fluss.ordered_ids SELECT f.n, d.id FROM (SELECT n, CONCAT('k', CAST(n AS"
                + " STRING)) AS k, PROCTIME() AS ptime FROM"
                + " default_catalog.default_database.keys_in_order) AS f JOIN fluss.ordered_dim"
                + " /*+ OPTIONS('lookup.insert-if-not-exists'='true', 'lookup.async'='true') */"
                + " FOR SYSTEM_TIME AS OF f.ptime AS d ON f.k = d.k")
        .await();
    int out = 0;
    try (CloseableIterator<Row> it =
        ddl.executeSql("SELECT n, id FROM fluss.ordered_ids").collect()) {
      while (it.hasNext()) {
        Row r = it.next();
        long n = (Long) r.getField(0);
        assertEquals(n + 1, (long) (Integer) r.getField(1), "the id of k" + n);
        out++;
      }
    }
    assertEquals(keys, out);
  }

  /** Runs the dictionary join into assigned (key, id) and the bitmap of the ids into uv. */
  private static void run(StreamTableEnvironment env) throws Exception {
    StatementSet jobs = env.createStatementSet();
    jobs.addInsertSql("INSERT INTO fluss.assigned SELECT fact.dim_b, uid_int32" + DICTIONARY_JOIN);
    jobs.addInsertSql(
        "INSERT INTO fluss.uv SELECT 'all', rb_build(ARRAY[uid_int32])" + DICTIONARY_JOIN);
    String plan = jobs.explain(ExplainDetail.JSON_EXECUTION_PLAN);
    int join = plan.indexOf("LookupJoin(");
    assertTrue(join >= 0, plan);
    Matcher parallelism = Pattern.compile("\"parallelism\" : (\\d+)").matcher(plan);
    assertTrue(parallelism.find(join), plan);
    assertEquals("4", parallelism.group(1), "the lookup join's parallelism");
    jobs.execute().await();
  }

  /** Each key's id, checking that every row of a key has the same one. */
  private static Map<String, Integer> assigned(StreamTableEnvironment batch) throws Exception {
    Map<String, Integer> ids = new HashMap<>();
    try (CloseableIterator<Row> it =
        batch.executeSql("SELECT dim_b, uid FROM fluss.assigned").collect()) {
      while (it.hasNext()) {
        Row r = it.next();
        String key = (String) r.getField(0);
        Integer id = (Integer) r.getField(1);
        Integer before = ids.putIfAbsent(key, id);
        assertTrue(before == null || before.equals(id), key + " has ids " + before + " and " + id);
      }
    }
    return ids;
  }

  private static TreeSet<Integer> range(int from, int to) {
    TreeSet<Integer> s = new TreeSet<>();
    for (int i = from; i <= to; i++) {
      s.add(i);
    }
    return s;
  }

  @Test
  void refusedWhereFlussRefusesIt() throws Exception {
    StreamTableEnvironment ddl = sql.env(true);
    ddl.executeSql("CREATE TABLE fluss.plain_log (k STRING, id INT)");
    ddl.executeSql(
        "CREATE TABLE fluss.two_part (a STRING, b STRING, id INT, PRIMARY KEY (a, b) NOT ENFORCED)"
            + " WITH ('bucket.key'='a', 'auto-increment.fields'='id')");
    ddl.executeSql(
        "CREATE TABLE fluss.strict_dim (k STRING, note STRING NOT NULL, id INT,"
            + " PRIMARY KEY (k) NOT ENFORCED) WITH ('auto-increment.fields'='id')");
    ddl.executeSql(
        "CREATE TABLE fluss.ids (k STRING, id INT, PRIMARY KEY (k) NOT ENFORCED)"
            + " WITH ('auto-increment.fields'='id')");
    StreamTableEnvironment env = factsEnv(0, 1, 1);
    String hint = " /*+ OPTIONS('lookup.insert-if-not-exists'='true') */";
    assertTrue(
        Sql.validationMessage(
                () ->
                    env.explainSql(
                        "SELECT * FROM fact JOIN fluss.plain_log"
                            + hint
                            + " FOR SYSTEM_TIME AS OF fact.ptime AS d ON fact.dim_b = d.k"))
            .contains("lookups need a primary-key table"));
    assertTrue(
        Sql.validationMessage(
                () ->
                    env.explainSql(
                        "SELECT * FROM fact JOIN fluss.two_part"
                            + hint
                            + " FOR SYSTEM_TIME AS OF fact.ptime AS d ON fact.dim_b = d.a"))
            .contains("needs the join keys to be exactly the primary key [a, b]"));
    assertTrue(
        Sql.validationMessage(
                () ->
                    env.explainSql(
                        "SELECT * FROM fact JOIN fluss.strict_dim"
                            + hint
                            + " FOR SYSTEM_TIME AS OF fact.ptime AS d ON fact.dim_b = d.k"))
            .contains("columns [note] are NOT NULL"));
    // Writing the auto-increment column is refused at planning, naming what to write instead.
    String refused =
        Sql.validationMessage(() -> ddl.executeSql("INSERT INTO fluss.ids VALUES ('x', 7)"));
    assertTrue(refused.contains("column 'id' is the auto-increment column"), refused);
    assertTrue(refused.contains("INSERT INTO fluss.ids (k) ..."), refused);
    ddl.executeSql("INSERT INTO fluss.ids (k) VALUES ('x')").await();
    assertEquals(List.of("+I[x, 1]"), Sql.rows(ddl, "SELECT k, id FROM fluss.ids"));
  }
}
