package io.fluxgate.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.Rows;
import io.fluxgate.client.ScanRequest;
import io.fluxgate.client.TableWriter;
import io.fluxgate.client.WriteMode;
import io.fluxgate.client.WriteRequest;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.function.Supplier;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.configuration.TaskManagerOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.StatementSet;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A streaming read stopped with a savepoint and resumed from it, with rows written in between, sees
 * every row once: the split offsets in the savepoint are exactly what went downstream.
 */
@Timeout(180)
public class SavepointTest {
  @RegisterExtension
  static final MiniClusterExtension CLUSTER =
      new MiniClusterExtension(
          new MiniClusterResourceConfiguration.Builder()
              .setNumberTaskManagers(1)
              .setNumberSlotsPerTaskManager(4)
              .setConfiguration(networkMemory())
              .build());

  @RegisterExtension
  static final ServerExtension SERVER = new ServerExtension("--default-bucket-num", "2");

  /** Enough network buffers for the streaming job and the batch statements beside it. */
  private static Configuration networkMemory() {
    Configuration conf = new Configuration();
    conf.set(TaskManagerOptions.NETWORK_MEMORY_MIN, MemorySize.parse("128m"));
    conf.set(TaskManagerOptions.NETWORK_MEMORY_MAX, MemorySize.parse("128m"));
    return conf;
  }

  @TempDir static Path savepoints;
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

  private final List<StreamTableEnvironment> envs = new ArrayList<>();

  StreamTableEnvironment env(boolean batch, String savepoint) {
    Configuration conf = new Configuration();
    conf.set(
        ExecutionOptions.RUNTIME_MODE,
        batch ? RuntimeExecutionMode.BATCH : RuntimeExecutionMode.STREAMING);
    if (savepoint != null) {
      conf.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
    }
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(2);
    StreamTableEnvironment t = StreamTableEnvironment.create(env);
    t.executeSql("CREATE CATALOG fg WITH ('type'='fluxgate', 'endpoint'='" + SERVER.uri() + "')");
    t.executeSql("USE CATALOG fg");
    envs.add(t);
    return t;
  }

  /** The job: a log table copied row by row, and a primary-key table's count and sum. */
  static JobClient startJob(StreamTableEnvironment streaming) {
    StatementSet job = streaming.createStatementSet();
    job.addInsertSql("INSERT INTO fluss.sp_copy SELECT id, v FROM fluss.sp_log");
    job.addInsertSql(
        "INSERT INTO fluss.sp_totals SELECT k, COUNT(*), SUM(v) FROM"
            + " (SELECT 1 AS k, v FROM fluss.sp_pk) GROUP BY k");
    return job.execute().getJobClient().orElseThrow();
  }

  /** Cancels the job; if it had failed instead, throws its failure. */
  static void cancel(JobClient job) throws Exception {
    try {
      job.cancel().get();
    } catch (ExecutionException e) {
      job.getJobExecutionResult().get();
      throw e;
    }
  }

  /** Polls read until it gives want, the deadline passes or the job ends (its error thrown). */
  static <T> T await(JobClient job, Supplier<T> read, T want) throws Exception {
    long deadline = System.nanoTime() + 90_000_000_000L;
    T got = read.get();
    while (!got.equals(want) && System.nanoTime() < deadline) {
      if (job.getJobStatus().get().isGloballyTerminalState()) {
        job.getJobExecutionResult().get(); // throws the job's failure
        throw new AssertionError("the job ended: " + job.getJobStatus().get());
      }
      Thread.sleep(20); // the poll interval, not a wait for the work: the condition decides
      got = read.get();
    }
    return got;
  }

  @Test
  void streamingReadResumedFromASavepointSeesEveryRowOnce() throws Exception {
    StreamTableEnvironment batch = env(true, null);
    batch.executeSql("CREATE TABLE fluss.sp_log (id BIGINT, v BIGINT)");
    batch.executeSql("CREATE TABLE fluss.sp_copy (id BIGINT, v BIGINT)");
    batch.executeSql(
        "CREATE TABLE fluss.sp_pk (id BIGINT, v BIGINT, PRIMARY KEY (id) NOT ENFORCED)");
    batch.executeSql(
        "CREATE TABLE fluss.sp_totals (k INT, n BIGINT, s BIGINT, PRIMARY KEY (k) NOT ENFORCED)");
    batch.executeSql(values("fluss.sp_log", 0, 200, 1)).await();
    batch.executeSql(values("fluss.sp_pk", 0, 200, 1)).await();

    JobClient first = startJob(env(false, null));
    List<String> copy = await(first, SavepointTest::copy, expectedCopy(200));
    assertEquals(expectedCopy(200), copy);
    assertEquals(
        List.of("+I[1, 200, 200]"),
        await(first, SavepointTest::totals, List.of("+I[1, 200, 200]")));
    String savepoint =
        first
            .stopWithSavepoint(false, savepoints.toUri().toString(), SavepointFormatType.CANONICAL)
            .get();

    // While the job is stopped: new log rows, and new, updated and deleted keys.
    batch.executeSql(values("fluss.sp_log", 200, 100, 1)).await();
    batch.executeSql(values("fluss.sp_pk", 200, 50, 1)).await(); // 250 keys
    batch.executeSql(values("fluss.sp_pk", 0, 10, 5)).await(); // sum 250 + 40
    deleteKeys("fluss.sp_pk", 240, 250); // 240 keys, sum 290 - 10

    JobClient resumed = startJob(env(false, savepoint));
    try {
      List<String> wantTotals = List.of("+I[1, 240, 280]");
      assertEquals(wantTotals, await(resumed, SavepointTest::totals, wantTotals));
      assertEquals(expectedCopy(300), await(resumed, SavepointTest::copy, expectedCopy(300)));
    } finally {
      cancel(resumed);
    }
    // Nothing more came in after the expected rows were there.
    assertEquals(expectedCopy(300), copy());
    assertTrue(savepoint.startsWith("file:"), savepoint);
  }

  /** Deletes ids [from, to) through the client: batch DELETE is the sink's, not yet there. */
  static void deleteKeys(String table, long from, long to) {
    Schema schema = Rows.schema(client, table);
    List<List<Object>> rows = new ArrayList<>();
    for (long id = from; id < to; id++) {
      rows.add(Rows.row(id, 0L));
    }
    try (VectorSchemaRoot root = Rows.batch(client.allocator(), schema, rows);
        TableWriter w = client.newWriter(WriteRequest.of(table).withMode(WriteMode.DELETE))) {
      w.write(root);
    }
  }

  static String values(String table, int from, int n, long v) {
    List<String> rows = new ArrayList<>();
    for (int id = from; id < from + n; id++) {
      rows.add("(CAST(" + id + " AS BIGINT), CAST(" + v + " AS BIGINT))");
    }
    return "INSERT INTO " + table + " VALUES " + String.join(", ", rows);
  }

  static List<String> expectedCopy(int n) {
    List<String> want = new ArrayList<>();
    for (int id = 0; id < n; id++) {
      want.add("+I[" + id + ", 1]");
    }
    want.sort(null);
    return want;
  }

  /** The copy's rows, read with the client: a Flink batch job per poll would be slow. */
  static List<String> copy() {
    return rows("fluss.sp_copy");
  }

  static List<String> totals() {
    return rows("fluss.sp_totals");
  }

  /** A table's rows, rendered as Flink prints insert rows, sorted. */
  static List<String> rows(String table) {
    List<String> out = new ArrayList<>();
    for (List<Object> r : Rows.read(client, ScanRequest.of(table))) {
      out.add("+I" + r);
    }
    out.sort(null);
    return out;
  }
}
