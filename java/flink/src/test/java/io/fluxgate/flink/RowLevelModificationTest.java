package io.fluxgate.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Batch DELETE and UPDATE statements, and the tables Fluss refuses them on, with its errors. */
@Timeout(120)
public class RowLevelModificationTest {
  @RegisterExtension static final MiniClusterExtension CLUSTER = ServerExtension.cluster(2);

  @RegisterExtension
  static final ServerExtension SERVER = new ServerExtension("--default-bucket-num", "2");

  StreamTableEnvironment env;

  @BeforeEach
  void open() {
    Configuration conf = new Configuration();
    conf.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.BATCH);
    StreamExecutionEnvironment e = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    e.setParallelism(2);
    env = StreamTableEnvironment.create(e, EnvironmentSettings.inBatchMode());
    env.executeSql("CREATE CATALOG fg WITH ('type'='fluxgate', 'endpoint'='" + SERVER.uri() + "')");
    env.executeSql("USE CATALOG fg");
  }

  @AfterEach
  void close() throws Exception {
    env.getCatalog("fg").orElseThrow().close();
  }

  /** Their rows carry the auto-increment id unchanged: it is left out of what they write. */
  @Test
  void deleteAndUpdateKeepTheIdsOfADictionaryTable() throws Exception {
    env.executeSql(
        "CREATE TABLE fluss.dict (k STRING, note STRING, id INT, PRIMARY KEY (k) NOT ENFORCED)"
            + " WITH ('auto-increment.fields'='id', 'bucket.num'='1')");
    env.executeSql("INSERT INTO fluss.dict (k, note) VALUES ('x', 'a'), ('y', 'b')").await();
    List<String> inserted = rows("SELECT * FROM fluss.dict");
    String x = inserted.get(0);
    assertTrue(x.startsWith("+I[x, a, "), inserted.toString());
    env.executeSql("UPDATE fluss.dict SET note = 'c' WHERE k = 'x'").await();
    assertEquals(
        List.of(x.replace(", a, ", ", c, "), inserted.get(1)), rows("SELECT * FROM fluss.dict"));
    env.executeSql("DELETE FROM fluss.dict WHERE k = 'y'").await();
    assertEquals(List.of(x.replace(", a, ", ", c, ")), rows("SELECT * FROM fluss.dict"));
  }

  @Test
  void deleteAndUpdateRowsOfAPrimaryKeyTable() throws Exception {
    env.executeSql(
        "CREATE TABLE fluss.users (id INT, name STRING, score INT, PRIMARY KEY (id) NOT ENFORCED)");
    env.executeSql(
            "INSERT INTO fluss.users VALUES (1, 'a', 10), (2, 'b', 20), (3, 'c', 30), (4, 'd', 40)")
        .await();

    env.executeSql("DELETE FROM fluss.users WHERE score > 25").await();
    assertEquals(List.of("+I[1, a, 10]", "+I[2, b, 20]"), rows("SELECT * FROM fluss.users"));

    env.executeSql("UPDATE fluss.users SET name = 'z', score = 99 WHERE id = 2").await();
    assertEquals(List.of("+I[1, a, 10]", "+I[2, z, 99]"), rows("SELECT * FROM fluss.users"));
  }

  @Test
  void refusedWithFlussErrors() {
    env.executeSql("CREATE TABLE fluss.events (id INT, name STRING)");
    assertRefused(
        "DELETE FROM fluss.events WHERE id = 1",
        "Table fluss.events is a Log Table. Log Table doesn't support DELETE and UPDATE"
            + " statements.");
    assertRefused(
        "UPDATE fluss.events SET name = 'x' WHERE id = 1",
        "Table fluss.events is a Log Table. Log Table doesn't support DELETE and UPDATE"
            + " statements.");

    env.executeSql(
        "CREATE TABLE fluss.firsts (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED)"
            + " WITH ('table.merge-engine'='first_row')");
    assertRefused(
        "UPDATE fluss.firsts SET name = 'x' WHERE id = 1",
        "Table fluss.firsts uses the 'FIRST_ROW' merge engine which does not support DELETE or"
            + " UPDATE statements.");

    env.executeSql(
        "CREATE TABLE fluss.kept (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED)"
            + " WITH ('table.delete.behavior'='disable')");
    assertRefused(
        "DELETE FROM fluss.kept WHERE id = 1",
        "Table fluss.kept has delete behavior set to 'disable' which does not support DELETE"
            + " statements.");
    assertRefused(
        "UPDATE fluss.kept SET id = 2 WHERE id = 1",
        "Updates to primary keys are not supported, primaryKeys ([id]), updatedColumns ([id])");
  }

  private void assertRefused(String sql, String message) {
    Throwable e = assertThrows(Exception.class, () -> env.executeSql(sql).await());
    String all = ExceptionUtils.stringifyException(e);
    assertTrue(all.contains(message), sql + " failed otherwise: " + all);
  }

  private List<String> rows(String sql) throws Exception {
    List<String> out = new ArrayList<>();
    try (CloseableIterator<Row> it = env.executeSql(sql).collect()) {
      it.forEachRemaining(r -> out.add(r.toString()));
    }
    out.sort(null);
    return out;
  }
}
