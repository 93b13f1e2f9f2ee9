package io.fluxgate.flink.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.Rows;
import io.fluxgate.client.ScanRequest;
import io.fluxgate.flink.ServerExtension;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongPredicate;
import org.apache.flink.api.common.JobID;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.CheckpointType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.functions.ScalarFunction;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Exactly-once into an aggregation table (sum): a streaming job fails once after it wrote rows the
 * restored state does not cover, restarts, and the sums are exact with undo recovery — and
 * double-counted with it switched off, which shows the undo is what makes them exact. Also into a
 * partitioned one, whose partitions the job creates as it goes.
 */
@Timeout(180)
public class SinkExactlyOnceTest {
  @RegisterExtension static final MiniClusterExtension CLUSTER = ServerExtension.cluster(4);

  @RegisterExtension static final ServerExtension SERVER = new ServerExtension();

  /**
   * Input rows: ids 1..ROWS, key id % 10, so each key sums to ROWS / 10; paced at 300 a second, so
   * that a job lasts 10 s, time for the test's checkpoint and its 100 rows after it even on a busy
   * machine.
   */
  private static final int ROWS = 3000;

  private static final Duration WAIT = Duration.ofSeconds(60);

  static FluxgateClient client;

  @BeforeAll
  static void start() throws Exception {
    client = FluxgateClient.connect(SERVER.uri());
  }

  @AfterAll
  static void stop() throws Exception {
    if (client != null) {
      client.close();
    }
  }

  /** Set by the test when the job is to fail; the job fails once, on its next row. */
  static volatile boolean armed;

  static final AtomicBoolean failed = new AtomicBoolean();

  /** The injected failure: a function of the query, as a user's UDF would fail. */
  public static class FailOnce extends ScalarFunction {
    public Long eval(Long id) {
      if (armed && failed.compareAndSet(false, true)) {
        throw new IllegalStateException("injected failure at id " + id);
      }
      return id;
    }
  }

  @BeforeEach
  void disarm() {
    armed = false;
    failed.set(false);
  }

  @Test
  void sumsAreExactAfterARestoreWithUndo(@InjectClusterClient ClusterClient<?> cluster)
      throws Exception {
    String table = "fluss.counts_undo";
    Map<String, Long> sums = runFailingOnce(cluster, table, false, true, true);
    assertEquals(expected(false), sums);
    assertTrue(
        client.producerOffsets("exactly-once-" + table, table).isEmpty(),
        "the finished job left its producer offsets behind");
  }

  @Test
  void aFirstAttemptFailingBeforeAnyCheckpointIsUndoneByTheNext(
      @InjectClusterClient ClusterClient<?> cluster) throws Exception {
    // No state to restore: the restart undoes back to the offsets registered at the start.
    String table = "fluss.counts_first";
    assertEquals(expected(false), runFailingOnce(cluster, table, false, true, false));
    assertTrue(
        client.producerOffsets("exactly-once-" + table, table).isEmpty(),
        "the finished job left its producer offsets behind");
  }

  /**
   * A partitioned aggregation table: the buckets are undone per partition, those of partitions
   * created after the checkpoint back to their start.
   */
  @Test
  void partitionedSumsAreExactAfterARestoreWithUndo(@InjectClusterClient ClusterClient<?> cluster)
      throws Exception {
    String table = "fluss.counts_by_part";
    assertEquals(expected(true), runFailingOnce(cluster, table, true, true, true));
    assertTrue(
        client.producerPartitionOffsets("exactly-once-" + table, table).isEmpty(),
        "the finished job left its producer offsets behind");
  }

  @Test
  void aPartitionedFirstAttemptFailingBeforeAnyCheckpointIsUndoneByTheNext(
      @InjectClusterClient ClusterClient<?> cluster) throws Exception {
    // Registered at the start: no partition (the table has none yet).
    String table = "fluss.counts_by_part_first";
    assertEquals(expected(true), runFailingOnce(cluster, table, true, true, false));
  }

  @Test
  void aBoundedBatchJobClearsItsProducerOffsetsWhenItEnds() throws Exception {
    Configuration conf = Configuration.fromMap(Map.of("execution.runtime-mode", "batch"));
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    StreamTableEnvironment t = StreamTableEnvironment.create(env);
    t.executeSql("CREATE CATALOG fg WITH ('type'='fluxgate', 'endpoint'='" + SERVER.uri() + "')");
    t.executeSql("USE CATALOG fg");
    try {
      t.executeSql(
          "CREATE TABLE fluss.counts_batch (k BIGINT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED) WITH"
              + " ('bucket.num'='4', 'table.merge-engine'='aggregation', 'fields.n.agg'='sum')");
      t.executeSql(
              "INSERT INTO fluss.counts_batch /*+ OPTIONS('sink.producer-id'='batch-job') */"
                  + " VALUES (CAST(1 AS BIGINT), CAST(2 AS BIGINT)), (CAST(1 AS BIGINT), CAST(3 AS"
                  + " BIGINT)), (CAST(7 AS BIGINT), CAST(1 AS BIGINT))")
          .await();
      assertEquals(Map.of("1", 5L, "7", 1L), sums("fluss.counts_batch"));
      assertTrue(client.producerOffsets("batch-job", "fluss.counts_batch").isEmpty());
    } finally {
      t.getCatalog("fg").orElseThrow().close();
    }
  }

  @Test
  void sumsDoubleCountWithoutUndo(@InjectClusterClient ClusterClient<?> cluster) throws Exception {
    Map<String, Long> sums = runFailingOnce(cluster, "fluss.counts_plain", false, false, true);
    long total = sums.values().stream().mapToLong(Long::longValue).sum();
    assertTrue(total > ROWS, "without undo the replayed rows count twice, got " + total);
  }

  /** The sums by key: k, or k/dt on the partitioned table (dt a thousand ids each). */
  private static Map<String, Long> expected(boolean partitioned) {
    Map<String, Long> want = new TreeMap<>();
    for (long id = 1; id <= ROWS; id++) {
      want.merge(id % 10 + (partitioned ? "/d" + id / 1000 : ""), 1L, Long::sum);
    }
    return want;
  }

  /**
   * Runs INSERT INTO table SELECT id % 10, 1 FROM a paced sequence (partitioned: into partition 'd'
   * || id / 1000 too); after some rows (and, with checkpoint, after a checkpoint and more rows),
   * fails the job once and waits for it to finish after its restart. Returns the table's sums.
   */
  private Map<String, Long> runFailingOnce(
      ClusterClient<?> cluster, String table, boolean partitioned, boolean undo, boolean checkpoint)
      throws Exception {
    Configuration conf =
        Configuration.fromMap(
            Map.of(
                "execution.runtime-mode", "streaming",
                // Checkpoints only when the test asks for one.
                "execution.checkpointing.interval", "1 d",
                "restart-strategy.type", "fixed-delay",
                "restart-strategy.fixed-delay.attempts", "1",
                "restart-strategy.fixed-delay.delay", "100 ms"));
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    StreamTableEnvironment t = StreamTableEnvironment.create(env);
    t.executeSql("CREATE CATALOG fg WITH ('type'='fluxgate', 'endpoint'='" + SERVER.uri() + "')");
    t.executeSql("USE CATALOG fg");
    try {
      t.createTemporarySystemFunction("FAIL_ONCE", FailOnce.class);
      t.executeSql(
          "CREATE TEMPORARY TABLE ids (id BIGINT) WITH ('connector'='datagen',"
              + " 'rows-per-second'='300', 'fields.id.kind'='sequence', 'fields.id.start'='1',"
              + " 'fields.id.end'='"
              + ROWS
              + "')");
      t.executeSql(
          "CREATE TABLE "
              + table
              + (partitioned
                  ? " (k BIGINT, dt STRING, n BIGINT, PRIMARY KEY (k, dt) NOT ENFORCED)"
                      + " PARTITIONED BY (dt)"
                  : " (k BIGINT, n BIGINT, PRIMARY KEY (k) NOT ENFORCED)")
              + " WITH ('bucket.num'='4', 'table.merge-engine'='aggregation',"
              + " 'fields.n.agg'='sum')");
      TableResult insert =
          t.executeSql(
              "INSERT INTO "
                  + table
                  + " /*+ OPTIONS('sink.producer-id'='exactly-once-"
                  + table
                  + "', 'sink.undo-recovery'='"
                  + undo
                  + "') */ SELECT FAIL_ONCE(id) % 10, "
                  + (partitioned ? "CONCAT('d', CAST(id / 1000 AS STRING)), " : "")
                  + "CAST(1 AS BIGINT) FROM ids");
      JobID job = insert.getJobClient().orElseThrow().getJobID();
      long written = await(table, n -> n >= 100);
      if (checkpoint) {
        cluster.triggerCheckpoint(job, CheckpointType.FULL).get();
        // Rows visible now may be in the checkpoint; 100 more surely are not. Partitioned: on
        // into partition d1 too, which a checkpoint this early does not know.
        long after = total(table) + 100;
        written = await(table, n -> n >= (partitioned ? Math.max(after, 1100) : after));
      }
      armed = true;
      insert.await();
      assertTrue(failed.get(), "the job ended before it failed (" + written + " rows then)");
      return sums(table);
    } finally {
      t.getCatalog("fg").orElseThrow().close();
    }
  }

  private static long await(String table, LongPredicate done) throws InterruptedException {
    long deadline = System.nanoTime() + WAIT.toNanos();
    while (true) {
      long n = total(table);
      if (done.test(n)) {
        return n;
      }
      assertTrue(System.nanoTime() < deadline, "only " + n + " rows were written to " + table);
      Thread.sleep(20);
    }
  }

  private static long total(String table) {
    return sums(table).values().stream().mapToLong(Long::longValue).sum();
  }

  /** The sum (last column) by key: the other columns, joined by '/'. */
  private static Map<String, Long> sums(String table) {
    Map<String, Long> out = new TreeMap<>();
    for (List<Object> row : Rows.read(client, ScanRequest.of(table))) {
      List<String> key = row.subList(0, row.size() - 1).stream().map(String::valueOf).toList();
      out.put(String.join("/", key), (Long) row.get(row.size() - 1));
    }
    return out;
  }
}
