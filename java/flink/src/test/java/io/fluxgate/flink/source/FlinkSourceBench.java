package io.fluxgate.flink.source;

import io.fluxgate.client.Column;
import io.fluxgate.client.Compression;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.FluxgateServer;
import io.fluxgate.client.ScanPlan;
import io.fluxgate.client.ScanRequest;
import io.fluxgate.client.TableSpec;
import io.fluxgate.client.TableWriter;
import io.fluxgate.client.TicketStream;
import io.fluxgate.client.WriteRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.test.util.MiniClusterWithClientResource;

/**
 * A bounded Flink read of a 20-column table against plain Flight DoGets of the same endpoints, in
 * the same JVM (docs/benchmarks.md, "Flink source"). Each round times the DoGets, then the same
 * query submitted two ways: to a session cluster that is up already (a MiniCluster started once, as
 * a Flink session cluster or the SQL client's is), and through a local environment, which starts a
 * MiniCluster for each query and stops it after. Not a test: run its main with FLUXGATE_BIN set;
 * arguments: rows (default 2,000,000) and rounds (default 3).
 */
public final class FlinkSourceBench {
  private static final String TABLE = "fluss.bench";
  private static final int BATCH = 50_000;
  private static final int PARALLELISM = 2;

  public static void main(String[] args) throws Exception {
    long rows = args.length > 0 ? Long.parseLong(args[0]) : 2_000_000;
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    Path dir = Files.createTempDirectory("fluxgate-bench");
    MiniClusterWithClientResource cluster =
        new MiniClusterWithClientResource(
            new MiniClusterResourceConfiguration.Builder()
                .setNumberTaskManagers(1)
                .setNumberSlotsPerTaskManager(PARALLELISM)
                .build());
    cluster.before();
    TestStreamEnvironment.unsetAsContext(); // before() made it the default; the local one is wanted
    try (FluxgateServer server = FluxgateServer.start(dir, "--default-bucket-num", "2");
        FluxgateClient client = FluxgateClient.connect(server.uri())) {
      write(client, rows);
      var sessionEnv =
          new TestStreamEnvironment(
              cluster.getMiniCluster(), batch(), PARALLELISM, List.of(), List.of());
      StreamTableEnvironment session = tables(sessionEnv, server.uri());
      StreamTableEnvironment local =
          tables(
              StreamExecutionEnvironment.createLocalEnvironment(PARALLELISM, batch()),
              server.uri());
      for (int r = 1; r <= rounds; r++) {
        double doGet = rate(rows, () -> check(rows, doGets(client)));
        long[] net = new long[1];
        double flink = rate(rows, () -> net[0] = flinkRead(session));
        double flinkNet = rows / (net[0] / 1e3);
        double perQuery = rate(rows, () -> flinkRead(local));
        System.out.printf(
            "round %d: DoGet %.0f rows/s; Flink query on a session cluster %.0f rows/s (%.2f×),"
                + " its job's run time %.0f rows/s (%.2f×); with a cluster started for the query"
                + " %.0f rows/s (%.2f×)%n",
            r, doGet, flink, flink / doGet, flinkNet, flinkNet / doGet, perQuery, perQuery / doGet);
      }
    } finally {
      cluster.after();
    }
  }

  private static Configuration batch() {
    Configuration conf = new Configuration();
    conf.set(ExecutionOptions.RUNTIME_MODE, RuntimeExecutionMode.BATCH);
    return conf;
  }

  interface Run {
    void run() throws Exception;
  }

  static double rate(long rows, Run run) throws Exception {
    long start = System.nanoTime();
    run.run();
    return rows / ((System.nanoTime() - start) / 1e9);
  }

  static void check(long want, long got) {
    if (want != got) {
      throw new IllegalStateException("read " + got + " rows, want " + want);
    }
  }

  /** 20 columns: an id, 9 BIGINT, 5 DOUBLE and 5 short STRING columns. */
  static void write(FluxgateClient client, long rows) {
    List<Column> cols = new ArrayList<>();
    cols.add(Column.of("id", "BIGINT"));
    for (int i = 1; i < 10; i++) {
      cols.add(Column.of("l" + i, "BIGINT"));
    }
    for (int i = 0; i < 5; i++) {
      cols.add(Column.of("d" + i, "DOUBLE"));
    }
    for (int i = 0; i < 5; i++) {
      cols.add(Column.of("s" + i, "STRING"));
    }
    client.createTable(
        TableSpec.of(TABLE, cols.toArray(Column[]::new)).withOptions(Map.of("bucket.num", "2")),
        false);
    var schema = client.plan(ScanRequest.of(TABLE)).schema();
    try (TableWriter w = client.newWriter(WriteRequest.of(TABLE), Compression.ZSTD, 4);
        VectorSchemaRoot root = VectorSchemaRoot.create(schema, client.allocator())) {
      for (long from = 0; from < rows; from += BATCH) {
        int n = (int) Math.min(BATCH, rows - from);
        root.allocateNew();
        for (int c = 0; c < 20; c++) {
          var v = root.getVector(c);
          for (int r = 0; r < n; r++) {
            long x = from + r;
            if (c < 10) {
              ((BigIntVector) v).setSafe(r, x * 31 + c);
            } else if (c < 15) {
              ((Float8Vector) v).setSafe(r, x * 0.5 + c);
            } else {
              ((VarCharVector) v)
                  .setSafe(r, ("v" + (x % 1000) + "-" + c).getBytes(StandardCharsets.UTF_8));
            }
          }
          v.setValueCount(n);
        }
        root.setRowCount(n);
        w.send(root);
      }
      w.flush();
    }
  }

  /** Every endpoint of a bounded scan read at once, one thread each, as stored (ZSTD). */
  static long doGets(FluxgateClient client) throws InterruptedException {
    ScanPlan plan = client.plan(ScanRequest.of(TABLE).withCompression(Compression.ZSTD));
    AtomicLong total = new AtomicLong();
    List<Thread> threads = new ArrayList<>();
    for (byte[] ticket : plan.tickets()) {
      Thread t =
          new Thread(
              () -> {
                try (TicketStream s = client.read(ticket)) {
                  while (s.next()) {
                    total.addAndGet(s.root().getRowCount());
                  }
                }
              });
      t.start();
      threads.add(t);
    }
    for (Thread t : threads) {
      t.join();
    }
    return total.get();
  }

  static StreamTableEnvironment tables(StreamExecutionEnvironment env, String uri) {
    StreamTableEnvironment t = StreamTableEnvironment.create(env);
    t.executeSql("CREATE CATALOG fg WITH ('type'='fluxgate', 'endpoint'='" + uri + "')");
    t.executeSql(
        "CREATE TEMPORARY TABLE sink WITH ('connector'='blackhole')"
            + " LIKE fg.fluss.bench (EXCLUDING ALL)");
    return t;
  }

  /**
   * Every row of every column through the source into a sink that drops them; returns the job's net
   * run time in milliseconds (from scheduled to finished, without planning and submission).
   */
  static long flinkRead(StreamTableEnvironment env) throws Exception {
    return env.executeSql("INSERT INTO sink SELECT * FROM fg.fluss.bench")
        .getJobClient()
        .orElseThrow()
        .getJobExecutionResult()
        .get()
        .getNetRuntime();
  }
}
