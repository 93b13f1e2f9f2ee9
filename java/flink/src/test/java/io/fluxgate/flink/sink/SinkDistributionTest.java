package io.fluxgate.flink.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.flink.ServerExtension;
import io.fluxgate.flink.Sql;
import java.util.ArrayList;
import java.util.List;
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

/** sink.distribution-mode with Fluss's rules and errors, and client.* options in hints. */
@Timeout(120)
public class SinkDistributionTest {
  @RegisterExtension static final MiniClusterExtension CLUSTER = ServerExtension.cluster(4);

  @RegisterExtension
  static final ServerExtension SERVER = new ServerExtension("--default-bucket-num", "3");

  final Sql sql = new Sql(SERVER.uri());
  StreamTableEnvironment env;

  @BeforeEach
  void open() {
    env = sql.env(true);
  }

  @AfterEach
  void close() throws Exception {
    sql.close();
  }

  private String refused(String sql) {
    Throwable e = assertThrows(Exception.class, () -> env.executeSql(sql).await());
    return ExceptionUtils.stringifyException(e);
  }

  @Test
  void bucketShuffleOfAPrimaryKeyTableWritesEveryRow() throws Exception {
    env.executeSql("CREATE TABLE fluss.pk_auto (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED)");
    StringBuilder values = new StringBuilder();
    for (int k = 0; k < 50; k++) {
      values.append(k == 0 ? "" : ", ").append("(").append(k).append(", 'v").append(k).append("')");
    }
    // client.* tuning is accepted in hints (and not stored).
    env.executeSql(
            "INSERT INTO fluss.pk_auto /*+ OPTIONS('sink.distribution-mode'='bucket',"
                + " 'client.writer.batch-size'='1mb') */ VALUES "
                + values)
        .await();
    assertEquals(List.of("+I[50]"), rows("SELECT COUNT(*) FROM fluss.pk_auto"));
  }

  @Test
  void partitionDynamicIsRefusedOnPrimaryKeyTables() {
    env.executeSql("CREATE TABLE fluss.pk_dyn (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED)");
    assertTrue(
        refused(
                "INSERT INTO fluss.pk_dyn /*+ OPTIONS('sink.distribution-mode'='partition_dynamic')"
                    + " */ VALUES (1, 'a')")
            .contains("Unsupported distribution mode: PARTITION_DYNAMIC for primary key table"));
  }

  @Test
  void mergeEngineTablesNeedTheBucketShuffle() {
    env.executeSql(
        "CREATE TABLE fluss.agg_none (k INT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED)"
            + " WITH ('table.merge-engine'='aggregation', 'fields.n.agg'='sum')");
    assertTrue(
        refused(
                "INSERT INTO fluss.agg_none /*+ OPTIONS('sink.distribution-mode'='none') */"
                    + " VALUES (1, CAST(1 AS BIGINT))")
            .contains(
                "For primary key tables with merge engine ('AGGREGATION'), 'sink.distribution-mode'"
                    + " must be 'bucket' or 'auto' (default)."));
  }

  @Test
  void bucketModeNeedsABucketKeyOnLogTables() throws Exception {
    env.executeSql("CREATE TABLE fluss.log_plain (id BIGINT, s STRING)");
    assertTrue(
        refused(
                "INSERT INTO fluss.log_plain /*+ OPTIONS('sink.distribution-mode'='bucket') */"
                    + " VALUES (CAST(1 AS BIGINT), 'a')")
            .contains("BUCKET mode is only supported for log tables with bucket keys"));
    env.executeSql("CREATE TABLE fluss.log_keyed (id BIGINT, s STRING) WITH ('bucket.key'='id')");
    env.executeSql(
            "INSERT INTO fluss.log_keyed /*+ OPTIONS('sink.distribution-mode'='bucket') */"
                + " VALUES (CAST(1 AS BIGINT), 'a'), (CAST(2 AS BIGINT), 'b')")
        .await();
    assertEquals(List.of("+I[1, a]", "+I[2, b]"), rows("SELECT * FROM fluss.log_keyed"));
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
