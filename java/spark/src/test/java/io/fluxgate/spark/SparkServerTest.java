package io.fluxgate.spark;

import io.fluxgate.client.ConnectOptions;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.FluxgateServer;
import io.fluxgate.client.Rows;
import io.fluxgate.client.TableWriter;
import io.fluxgate.client.WriteRequest;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF1;
import org.apache.spark.sql.execution.ExplainMode;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.Trigger;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import scala.jdk.javaapi.CollectionConverters;

/**
 * The tests' fluxgate server and local[2,2] SparkSession (two threads, a task tried twice; with the
 * catalog "fg" on the server), started once for all test classes: Spark takes long to start on a
 * small machine. Each test makes tables of its own through {@link #table}.
 */
@ExtendWith(SparkServerTest.Shared.class)
abstract class SparkServerTest {
  static FluxgateServer server;
  static SparkSession spark;
  static BufferAllocator allocator;
  static FluxgateClient client;
  private static int tables;

  /** Where the fail_at UDF throws: the id, and how many more times. Local mode: one JVM. */
  private static final AtomicLong failId = new AtomicLong(-1);

  private static final AtomicInteger failures = new AtomicInteger();

  /** Makes the fail_at UDF (the identity on a BIGINT) throw the next times it is given id. */
  static void failAt(long id, int times) {
    failures.set(times);
    failId.set(id);
  }

  /** How many more times fail_at is to throw. */
  static int failuresLeft() {
    return failures.get();
  }

  /** Starts the fixture on the first test class and stops it when every class has run. */
  static final class Shared implements BeforeAllCallback {
    @Override
    public void beforeAll(ExtensionContext context) {
      context
          .getRoot()
          .getStore(ExtensionContext.Namespace.GLOBAL)
          .getOrComputeIfAbsent(Fixture.class.getName(), k -> Fixture.start(), Fixture.class);
    }
  }

  /** What the tests share; JUnit closes it after the last class. */
  static final class Fixture implements AutoCloseable {
    private final Path dir;

    private Fixture(Path dir) {
      this.dir = dir;
    }

    static Fixture start() {
      try {
        Path dir = Files.createTempDirectory("fluxgate-spark-test");
        server = FluxgateServer.start(dir);
        allocator = new RootAllocator();
        client =
            FluxgateClient.connect(
                server.uri(), ConnectOptions.defaults().withAllocator(allocator));
        client.createDatabase("fluss", true);
        spark =
            SparkSession.builder()
                .master("local[2,2]")
                .appName("fluxgate-spark-test")
                .config("spark.ui.enabled", "false")
                // Loopback only: the tests talk to nothing but this machine.
                .config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                // The Spark Connect server ReadmePysparkTest starts: loopback, on a free port.
                .config("spark.connect.grpc.binding.address", "127.0.0.1")
                .config("spark.connect.grpc.binding.port", "0")
                .config("spark.sql.warehouse.dir", dir.resolve("warehouse").toString())
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.sql.session.timeZone", "UTC")
                // Plans as they run, so a test finds the scan node and its metrics directly.
                .config("spark.sql.adaptive.enabled", "false")
                .config("spark.sql.catalog.fg", FluxgateCatalog.class.getName())
                .config("spark.sql.catalog.fg.endpoint", server.uri())
                .getOrCreate();
        spark
            .udf()
            .register(
                "fail_at",
                (UDF1<Long, Long>)
                    id -> {
                      if (id == failId.get()
                          && failures.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                        throw new IllegalStateException("injected failure at id " + id);
                      }
                      return id;
                    },
                DataTypes.LongType);
        return new Fixture(dir);
      } catch (Exception e) {
        throw new IllegalStateException("start the test fixture", e);
      }
    }

    @Override
    public void close() throws IOException {
      spark.stop();
      client.close();
      allocator.close();
      try {
        server.close();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted stopping the server", e);
      }
      try (Stream<Path> paths = Files.walk(dir)) {
        for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
          Files.delete(p);
        }
      }
    }
  }

  /** A fresh table name in the database fluss. */
  static String table(String prefix) {
    return "fluss." + prefix + "_" + (++tables);
  }

  /** Appends or upserts the rows, each in the table's column order, as one batch. */
  static void write(String table, List<List<Object>> rows) {
    try (VectorSchemaRoot batch = Rows.batch(allocator, Rows.schema(client, table), rows);
        TableWriter w = client.newWriter(WriteRequest.of(table))) {
      w.write(batch);
    }
  }

  /** A fluxgate read of table through the DataFrame API. */
  static Dataset<Row> read(String table) {
    return read(table, Map.of());
  }

  /** A fluxgate read of table through the DataFrame API, with further read options. */
  static Dataset<Row> read(String table, Map<String, String> options) {
    return spark.read().format("fluxgate").options(sourceOptions(table, options)).load();
  }

  /** A fluxgate stream of table through the DataFrame API, with further read options. */
  static Dataset<Row> stream(String table, Map<String, String> options) {
    return spark.readStream().format("fluxgate").options(sourceOptions(table, options)).load();
  }

  /** The fluxgate source's options for table on the server, then the further options. */
  private static Map<String, String> sourceOptions(String table, Map<String, String> options) {
    Map<String, String> all = new LinkedHashMap<>(Map.of("endpoint", server.uri(), "table", table));
    all.putAll(options);
    return all;
  }

  /** A query following the table into parquet files under out, with this checkpoint. */
  static StreamingQuery follow(String table, Path out, Path checkpoint) throws Exception {
    return stream(table, Map.of())
        .writeStream()
        .format("parquet")
        .option("path", out.toString())
        .option("checkpointLocation", checkpoint.toString())
        .trigger(Trigger.ProcessingTime(100))
        .start();
  }

  /** The fluxgate scan node of an executed DataFrame, for its metrics. */
  static BatchScanExec scanNode(Dataset<Row> df) {
    for (SparkPlan leaf :
        CollectionConverters.asJava(df.queryExecution().executedPlan().collectLeaves())) {
      if (leaf instanceof BatchScanExec scan) {
        return scan;
      }
    }
    throw new AssertionError("no BatchScanExec in " + df.queryExecution().executedPlan());
  }

  /** The scan's "bytes read" metric after the DataFrame ran. */
  static long bytesRead(Dataset<Row> df) {
    return scanNode(df).metrics().apply(BytesRead.NAME).value();
  }

  /** The formatted EXPLAIN of a DataFrame. */
  static String explain(Dataset<Row> df) {
    return df.queryExecution().explainString(ExplainMode.fromString("formatted"));
  }

  /** The messages of t and its causes, to assert a failure says what went wrong. */
  static String messages(Throwable t) {
    StringBuilder b = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      b.append(c.getMessage()).append('\n');
    }
    return b.toString();
  }

  /** The rows as lists of plain values, in order. */
  static List<List<Object>> rows(Dataset<Row> df) {
    List<List<Object>> out = new ArrayList<>();
    for (Row r : df.collectAsList()) {
      List<Object> row = new ArrayList<>();
      for (int i = 0; i < r.length(); i++) {
        row.add(r.get(i));
      }
      out.add(row);
    }
    return out;
  }
}
