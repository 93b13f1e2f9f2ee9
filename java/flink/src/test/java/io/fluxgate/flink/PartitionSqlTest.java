package io.fluxgate.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.stream.IntStream;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Partitioned tables through Flink SQL (PARTITIONED BY), as a Flink user writes it. */
@Timeout(120)
public class PartitionSqlTest {
  @RegisterExtension static final MiniClusterExtension CLUSTER = ServerExtension.cluster(4);

  static final ServerMetrics metrics = ServerMetrics.onFreePort();

  @RegisterExtension
  static final ServerExtension SERVER =
      new ServerExtension(metrics.flags("--default-bucket-num", "2"));

  private final Sql sql = new Sql(SERVER.uri());

  @AfterEach
  void closeCatalogs() throws Exception {
    sql.close();
  }

  /**
   * An INSERT of n (id, payload, dt) rows of each day. The values are literals, a payload made from
   * them: VALUES rows with a function call would each be an operator of their own.
   */
  private static String days(String table, int n, String... days) {
    List<String> rows = new ArrayList<>();
    for (String day : days) {
      IntStream.range(0, n).forEach(i -> rows.add("(" + i + ", '" + day + "')"));
    }
    return "INSERT INTO "
        + table
        + " SELECT CAST(id AS BIGINT), REPEAT('x', 100), dt FROM (VALUES "
        + String.join(", ", rows)
        + ") AS v(id, dt)";
  }

  @Test
  void aDayPartitionedTableIsWrittenAndReadOnlyInTheDaysAskedFor() throws Exception {
    StreamTableEnvironment env = sql.env(true);
    env.executeSql(
        "CREATE TABLE fluss.visits (id BIGINT, payload STRING, dt STRING) PARTITIONED BY (dt)");
    env.executeSql(days("fluss.visits", 50, "20261201", "20261202", "20261203")).await();

    assertEquals(
        List.of("+I[dt=20261201]", "+I[dt=20261202]", "+I[dt=20261203]"),
        Sql.rows(env, "SHOW PARTITIONS fluss.visits"));
    assertTrue(
        String.join("\n", Sql.rows(env, "SHOW CREATE TABLE fluss.visits"))
            .contains("PARTITIONED BY (`dt`)"));

    String oneDay = "SELECT id FROM fluss.visits WHERE dt = '20261202'";
    String plan = env.explainSql(oneDay);
    assertTrue(plan.contains("partitions=[{dt=20261202}]"), plan);

    double full =
        bytesRead(() -> assertEquals(150, Sql.rows(env, "SELECT * FROM fluss.visits").size()));
    double one = bytesRead(() -> assertEquals(50, Sql.rows(env, oneDay).size()));
    assertTrue(one < full / 2, "bytes read: " + one + " of one day vs " + full + " of three");
    assertEquals(
        List.of("+I[20261201, 50]", "+I[20261203, 50]"),
        Sql.rows(env, "SELECT dt, COUNT(*) FROM fluss.visits WHERE dt <> '20261202' GROUP BY dt"));
  }

  interface Query {
    void run() throws Exception;
  }

  /** The Arrow bytes the server sent of fluss.visits while q ran. */
  private static double bytesRead(Query q) throws Exception {
    double before = metrics.sum("fluxgate_bytes_read_total", "fluss.visits");
    q.run();
    return metrics.sum("fluxgate_bytes_read_total", "fluss.visits") - before;
  }

  @Test
  void partitionsAreAddedShownAndDropped() throws Exception {
    StreamTableEnvironment env = sql.env(true);
    env.executeSql("CREATE TABLE fluss.managed (id BIGINT, dt STRING) PARTITIONED BY (dt)");
    env.executeSql("ALTER TABLE fluss.managed ADD PARTITION (dt = '20261201')");
    env.executeSql(
        "ALTER TABLE fluss.managed ADD IF NOT EXISTS PARTITION (dt = '20261201')"
            + " PARTITION (dt = '20261202')");
    assertEquals(
        List.of("+I[dt=20261201]", "+I[dt=20261202]"),
        Sql.rows(env, "SHOW PARTITIONS fluss.managed"));
    assertEquals(
        List.of("+I[dt=20261202]"),
        Sql.rows(env, "SHOW PARTITIONS fluss.managed PARTITION (dt = '20261202')"));

    env.executeSql("INSERT INTO fluss.managed VALUES (1, '20261201'), (2, '20261202')").await();
    env.executeSql("ALTER TABLE fluss.managed DROP PARTITION (dt = '20261201')");
    assertEquals(List.of("+I[dt=20261202]"), Sql.rows(env, "SHOW PARTITIONS fluss.managed"));
    assertEquals(List.of("+I[2, 20261202]"), Sql.rows(env, "SELECT * FROM fluss.managed"));

    String refused =
        Sql.failure(
            () ->
                env.executeSql(
                        "INSERT INTO fluss.managed /*+ OPTIONS("
                            + "'client.writer.dynamic-create-partition.enabled'='false') */"
                            + " VALUES (3, '20261205')")
                    .await());
    assertTrue(refused.contains("dt=20261205"), refused);
    assertEquals(List.of("+I[dt=20261202]"), Sql.rows(env, "SHOW PARTITIONS fluss.managed"));
  }

  @Test
  void aStreamingReadPicksUpPartitionsCreatedAfterItStartedAndOutlivesDroppedOnes()
      throws Exception {
    StreamTableEnvironment batch = sql.env(true);
    batch.executeSql("CREATE TABLE fluss.followed (id BIGINT, dt STRING) PARTITIONED BY (dt)");
    batch.executeSql("INSERT INTO fluss.followed VALUES (1, '20261201')").await();

    StreamTableEnvironment stream = sql.env(false);
    TableResult follow =
        stream.executeSql(
            "SELECT id, dt FROM fluss.followed /*+ OPTIONS("
                + "'scan.startup.mode'='earliest',"
                + " 'scan.partition.discovery.interval'='100ms') */");
    try (CloseableIterator<Row> it = follow.collect()) {
      assertEquals("+I[1, 20261201]", it.next().toString()); // the job runs: planned
      batch
          .executeSql("INSERT INTO fluss.followed VALUES (2, '20261202'), (3, '20261202')")
          .await();
      List<String> later = new ArrayList<>(List.of(it.next().toString(), it.next().toString()));
      later.sort(null);
      assertEquals(List.of("+I[2, 20261202]", "+I[3, 20261202]"), later);

      // Dropping a partition being read ends its splits; the others go on.
      batch.executeSql("ALTER TABLE fluss.followed DROP PARTITION (dt = '20261201')");
      batch.executeSql("INSERT INTO fluss.followed VALUES (4, '20261202')").await();
      assertEquals("+I[4, 20261202]", it.next().toString());

      // Created again under its name, it has a new id: a new partition, read from its start.
      batch.executeSql("INSERT INTO fluss.followed VALUES (5, '20261201')").await();
      assertEquals("+I[5, 20261201]", it.next().toString());
    }
    // Closing the results cancels the job; wait for it to end, so its slots are free again.
    JobClient job = follow.getJobClient().orElseThrow();
    assertThrows(ExecutionException.class, () -> job.getJobExecutionResult().get());
  }

  @Test
  void aPartitionedPrimaryKeyTableIsUpserted() throws Exception {
    StreamTableEnvironment batch = sql.env(true);
    batch.executeSql(
        "CREATE TABLE fluss.prices (item INT, region STRING, price INT,"
            + " PRIMARY KEY (item, region) NOT ENFORCED) PARTITIONED BY (region)");
    batch
        .executeSql("INSERT INTO fluss.prices VALUES (1, 'eu', 10), (1, 'us', 12), (2, 'eu', 20)")
        .await();
    batch.executeSql("INSERT INTO fluss.prices VALUES (1, 'eu', 11)").await();
    assertEquals(
        List.of("+I[1, eu, 11]", "+I[1, us, 12]", "+I[2, eu, 20]"),
        Sql.rows(batch, "SELECT * FROM fluss.prices"));
    assertEquals(
        List.of("+I[1, us, 12]"),
        Sql.rows(batch, "SELECT * FROM fluss.prices WHERE region = 'us'"));
  }

  @Test
  void aLookupJoinOnAPartitionedPrimaryKeyTableLooksUpInThePartitionOfTheKey() throws Exception {
    StreamTableEnvironment batch = sql.env(true);
    batch.executeSql(
        "CREATE TABLE fluss.stock (item INT, region STRING, qty INT,"
            + " PRIMARY KEY (item, region) NOT ENFORCED) PARTITIONED BY (region)");
    batch
        .executeSql("INSERT INTO fluss.stock VALUES (1, 'eu', 5), (1, 'us', 7), (2, 'eu', 9)")
        .await();

    StreamTableEnvironment stream = sql.env(false);
    stream.createTemporaryView(
        "orders",
        stream.sqlQuery(
            "SELECT order_id, item, region, PROCTIME() AS ptime FROM (VALUES (100, 1, 'eu'), (101,"
                + " 1, 'us'), (102, 2, 'us'), (103, 2, 'ap')) AS t (order_id, item, region)"));
    String join =
        "SELECT o.order_id, s.qty FROM orders AS o LEFT JOIN fluss.stock"
            + " FOR SYSTEM_TIME AS OF o.ptime AS s ON o.item = s.item AND o.region = s.region";
    assertTrue(stream.explainSql(join).contains("LookupJoin"), stream.explainSql(join));
    assertEquals(
        List.of("+I[100, 5]", "+I[101, 7]", "+I[102, null]", "+I[103, null]"),
        Sql.rows(stream, join));
  }

  /**
   * A join on the bucket key and the partition key of a table whose bucket key is a strict prefix
   * of its physical primary key: a prefix lookup, every row of the prefix in the key's partition.
   */
  @Test
  void aLookupJoinOnTheBucketKeyAndPartitionKeyIsAPrefixLookup() throws Exception {
    StreamTableEnvironment batch = sql.env(true);
    batch.executeSql(
        "CREATE TABLE fluss.bins (item INT, region STRING, bin INT, qty INT,"
            + " PRIMARY KEY (item, region, bin) NOT ENFORCED) PARTITIONED BY (region)"
            + " WITH ('bucket.key' = 'item')");
    batch
        .executeSql(
            "INSERT INTO fluss.bins VALUES (1, 'eu', 1, 5), (1, 'eu', 2, 6), (1, 'us', 1, 7),"
                + " (2, 'eu', 1, 9)")
        .await();

    StreamTableEnvironment stream = sql.env(false);
    stream.createTemporaryView(
        "orders",
        stream.sqlQuery(
            "SELECT order_id, item, region, PROCTIME() AS ptime FROM (VALUES (100, 1, 'eu'), (101,"
                + " 1, 'us'), (102, 2, 'us'), (103, 2, 'ap')) AS t (order_id, item, region)"));
    String join =
        "SELECT o.order_id, b.bin, b.qty FROM orders AS o LEFT JOIN fluss.bins"
            + " FOR SYSTEM_TIME AS OF o.ptime AS b ON o.item = b.item AND o.region = b.region";
    assertEquals(
        List.of(
            "+I[100, 1, 5]",
            "+I[100, 2, 6]",
            "+I[101, 1, 7]",
            "+I[102, null, null]",
            "+I[103, null, null]"),
        Sql.rows(stream, join));
  }
}
