package io.fluxgate.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fluxgate.client.Column;
import io.fluxgate.client.Compression;
import io.fluxgate.client.ConnectOptions;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.FluxgateServer;
import io.fluxgate.client.ScanPlan;
import io.fluxgate.client.ScanRequest;
import io.fluxgate.client.TableSpec;
import io.fluxgate.client.TableWriter;
import io.fluxgate.client.WriteRequest;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import org.apache.arrow.flight.FlightClient;
import org.apache.arrow.flight.FlightStream;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Spark reads of a 2M-row, 20-column table against plain Arrow Flight DoGets of the same endpoints
 * in the same JVM, and the bytes a projection reads against a full read (the server's /metrics).
 * Tagged "benchmark": not run by {@code verify}; docs/benchmarks.md ("Spark") has the command. It
 * prints its figures and asserts only that Spark and the DoGets agree on the results.
 */
@Tag("benchmark")
class SparkReadBenchmark extends SparkServerTest {
  private static final String TABLE = "bench.wide";
  private static final int ROWS = 2_000_000;
  private static final int BATCH = 65_536;
  private static final int RUNS = 5;

  @TempDir static Path dir;
  static FluxgateServer bench;
  static int httpPort;
  static BufferAllocator benchAllocator;
  static FluxgateClient benchClient;

  @BeforeAll
  static void startAndFill() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      httpPort = s.getLocalPort();
    }
    bench = FluxgateServer.start(dir, "--http", "127.0.0.1:" + httpPort);
    benchAllocator = new RootAllocator();
    benchClient =
        FluxgateClient.connect(
            bench.uri(), ConnectOptions.defaults().withAllocator(benchAllocator));
    benchClient.createDatabase("bench", true);
    List<Column> columns = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      columns.add(Column.of("c" + i, i < 10 ? "BIGINT" : "DOUBLE"));
    }
    // Uncompressed, so a plain Arrow Java FlightClient (which does not decompress) reads it too.
    benchClient.createTable(
        TableSpec.of(TABLE, columns.toArray(new Column[0]))
            .withOptions(Map.of("bucket.num", "2", "table.log.arrow.compression.type", "none")),
        false);
    fill();
  }

  /** ROWS rows of pseudo-random whole numbers below 10^6, so sums are exact in both types. */
  private static void fill() {
    SplittableRandom rnd = new SplittableRandom(17);
    try (VectorSchemaRoot root =
            VectorSchemaRoot.create(
                benchClient.plan(ScanRequest.of(TABLE)).schema(), benchAllocator);
        TableWriter w = benchClient.newWriter(WriteRequest.of(TABLE), Compression.NONE, 8)) {
      root.getFieldVectors().forEach(v -> v.setInitialCapacity(BATCH));
      for (int done = 0; done < ROWS; done += BATCH) {
        int n = Math.min(BATCH, ROWS - done);
        root.allocateNew();
        for (FieldVector v : root.getFieldVectors()) {
          for (int r = 0; r < n; r++) {
            if (v instanceof BigIntVector b) {
              b.set(r, rnd.nextInt(1_000_000));
            } else {
              ((Float8Vector) v).set(r, rnd.nextInt(1_000_000));
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

  @AfterAll
  static void stop() throws Exception {
    if (benchClient != null) {
      benchClient.close();
      benchAllocator.close();
    }
    if (bench != null) {
      bench.close();
    }
  }

  private static Dataset<Row> table() {
    return spark
        .read()
        .format("fluxgate")
        .option("endpoint", bench.uri())
        .option("table", TABLE)
        .load();
  }

  @Test
  void sparkAgainstPlainDoGets() throws Exception {
    List<String> report = new ArrayList<>();

    // count(*): the connector reads the narrowest column, c0; the DoGets read the same.
    long[] count = new long[1];
    double countBase = rowsPerSecond(() -> doGets(ScanRequest.of(TABLE).withColumns("c0"))[0]);
    double countSpark = rowsPerSecond(() -> count[0] = table().count());
    assertEquals(ROWS, count[0]);
    report.add(line("count(*)", countBase, countSpark));

    // sum(c0), sum(c10): 2 of the 20 columns.
    long[] base = doGets(ScanRequest.of(TABLE).withColumns("c0", "c10"));
    Row spark2 = table().selectExpr("sum(c0)", "sum(c10)").first();
    assertEquals(base[1], spark2.getLong(0));
    assertEquals((double) base[2], spark2.getDouble(1));
    double sumBase = rowsPerSecond(() -> doGets(ScanRequest.of(TABLE).withColumns("c0", "c10"))[0]);
    double sumSpark =
        rowsPerSecond(
            () -> {
              table().selectExpr("sum(c0)", "sum(c10)").first();
              return (long) ROWS;
            });
    report.add(line("sum(c0), sum(c10)", sumBase, sumSpark));

    // Bytes: a Spark read of every column against the projection of two.
    String[] all = new String[20];
    for (int i = 0; i < 20; i++) {
      all[i] = "sum(c" + i + ")";
    }
    long[] before = bytesRead();
    table().selectExpr(all).first();
    long[] full = minus(bytesRead(), before);
    before = bytesRead();
    table().selectExpr("sum(c0)", "sum(c10)").first();
    long[] projected = minus(bytesRead(), before);
    report.add(
        String.format(
            "bytes sent (fluxgate_bytes_read_total): full %,d, 2 of 20 %,d: %.1fx fewer",
            full[0], projected[0], (double) full[0] / projected[0]));
    report.add(
        String.format(
            "log bytes read (fluxgate_log_bytes_read_total): full %,d, 2 of 20 %,d: %.1fx fewer",
            full[1], projected[1], (double) full[1] / projected[1]));
    System.out.println(
        "SparkReadBenchmark, " + ROWS + " rows x 20 columns, medians of " + RUNS + " runs:");
    report.forEach(System.out::println);
  }

  private static String line(String what, double base, double spark) {
    return String.format(
        "%-20s DoGets %,12.0f rows/s   Spark %,12.0f rows/s   ratio %.2f",
        what, base, spark, spark / base);
  }

  /**
   * The median rows per second of RUNS runs of work (which returns the rows it read), warmed up.
   */
  private static double rowsPerSecond(Supplier<Long> work) {
    work.get();
    double[] rates = new double[RUNS];
    for (int i = 0; i < RUNS; i++) {
      long start = System.nanoTime();
      long rows = work.get();
      rates[i] = rows / ((System.nanoTime() - start) / 1e9);
    }
    Arrays.sort(rates);
    return rates[RUNS / 2];
  }

  /**
   * Plans request and reads every endpoint with Arrow Java's FlightClient, one thread each as
   * Spark's local[2] does: the rows, and the sums of the first BIGINT and DOUBLE columns read.
   */
  private static long[] doGets(ScanRequest request) {
    ScanPlan plan = benchClient.plan(request);
    ExecutorService pool = Executors.newFixedThreadPool(plan.tickets().size());
    try (BufferAllocator allocator = new RootAllocator();
        FlightClient flight =
            FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", bench.port))
                .build()) {
      List<Future<long[]>> parts = new ArrayList<>();
      for (byte[] ticket : plan.tickets()) {
        parts.add(pool.submit(() -> readTicket(flight, ticket)));
      }
      long[] out = new long[3];
      for (Future<long[]> f : parts) {
        long[] p = f.get();
        for (int i = 0; i < 3; i++) {
          out[i] += p[i];
        }
      }
      return out;
    } catch (Exception e) {
      throw new IllegalStateException("DoGets of " + TABLE, e);
    } finally {
      pool.shutdown();
    }
  }

  private static long[] readTicket(FlightClient flight, byte[] ticket) throws Exception {
    long[] out = new long[3];
    try (FlightStream s = flight.getStream(new Ticket(ticket))) {
      while (s.next()) {
        VectorSchemaRoot root = s.getRoot();
        int n = root.getRowCount();
        out[0] += n;
        for (FieldVector v : root.getFieldVectors()) {
          if (v instanceof BigIntVector b) {
            for (int r = 0; r < n; r++) {
              out[1] += b.get(r);
            }
          } else if (v instanceof Float8Vector d) {
            for (int r = 0; r < n; r++) {
              out[2] += (long) d.get(r);
            }
          }
        }
      }
    }
    return out;
  }

  /** The server's fluxgate_bytes_read_total and fluxgate_log_bytes_read_total for the table. */
  private static long[] bytesRead() throws IOException, InterruptedException {
    String text =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + httpPort + "/metrics"))
                    .build(),
                HttpResponse.BodyHandlers.ofString())
            .body();
    long[] out = new long[2];
    for (String line : text.split("\n")) {
      if (!line.contains("table=\"" + TABLE + "\"")) {
        continue;
      }
      double v = Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      if (line.startsWith("fluxgate_bytes_read_total{")) {
        out[0] += (long) v;
      } else if (line.startsWith("fluxgate_log_bytes_read_total{")) {
        out[1] += (long) v;
      }
    }
    return out;
  }

  private static long[] minus(long[] a, long[] b) {
    return new long[] {a[0] - b[0], a[1] - b[1]};
  }
}
