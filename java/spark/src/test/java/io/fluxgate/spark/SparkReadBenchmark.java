package io.fluxgate.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fluxgate.client.Column;
import io.fluxgate.client.Compression;
import io.fluxgate.client.ConnectOptions;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.FluxgateServer;
import io.fluxgate.client.Rows;
import io.fluxgate.client.ScanPlan;
import io.fluxgate.client.ScanRequest;
import io.fluxgate.client.TableSpec;
import io.fluxgate.client.TableWriter;
import io.fluxgate.client.TicketStream;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Function;
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
 * Spark reads of a 2M-row (-Dbench.rows), 20-column table against plain Arrow Flight DoGets of the
 * same endpoints in the same JVM, and the bytes a projection reads against a full read (the
 * server's /metrics). Tagged "benchmark": not run by {@code verify}; docs/benchmarks.md ("Spark")
 * has the command. It prints its figures and asserts only that Spark and the DoGets agree on the
 * results.
 */
@Tag("benchmark")
class SparkReadBenchmark extends SparkServerTest {
  private static final String TABLE = "bench.wide";
  private static final String TINY = "bench.one_row"; // for Spark's cost of a query itself

  /** The table's rows: -Dbench.rows=N, default 2M. */
  private static final long ROWS = Long.getLong("bench.rows", 2_000_000);

  private static final int BATCH = 65_536;
  private static final int RUNS = 7;

  /** Runs before the measured ones: Spark's planning code takes tens of queries to be compiled. */
  private static final int WARMUPS = 5;

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
    benchClient.createTable(TableSpec.of(TINY, Column.of("c0", "BIGINT")), false);
    try (VectorSchemaRoot one =
            Rows.batch(benchAllocator, Rows.schema(benchClient, TINY), List.of(Rows.row(1L)));
        TableWriter w = benchClient.newWriter(WriteRequest.of(TINY))) {
      w.write(one);
    }
  }

  /** ROWS rows of pseudo-random whole numbers below 10^6, so sums are exact in both types. */
  private static void fill() {
    SplittableRandom rnd = new SplittableRandom(17);
    try (VectorSchemaRoot root =
            VectorSchemaRoot.create(
                benchClient.plan(ScanRequest.of(TABLE)).schema(), benchAllocator);
        TableWriter w = benchClient.newWriter(WriteRequest.of(TABLE), Compression.NONE, 8)) {
      root.getFieldVectors().forEach(v -> v.setInitialCapacity(BATCH));
      for (long done = 0; done < ROWS; done += BATCH) {
        int n = (int) Math.min(BATCH, ROWS - done);
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
    return benchRead(TABLE, true);
  }

  /** A read of name; pushCount false turns the COUNT(*) pushdown off, so Spark scans to count. */
  private static Dataset<Row> benchRead(String name, boolean pushCount) {
    return spark
        .read()
        .format("fluxgate")
        .option("endpoint", bench.uri())
        .option("table", name)
        .option("pushdown.count", pushCount)
        .load();
  }

  @Test
  void sparkAgainstPlainDoGets() throws Exception {
    List<String> report = new ArrayList<>();

    // count(*): pushed down (answered from list-offsets) and scanned (the connector reads the
    // narrowest column, c0; the DoGets read the same).
    long[] count = new long[2];
    ScanRequest c0 = ScanRequest.of(TABLE).withColumns("c0");
    double[] counts =
        rowsPerSecond(
            () -> doGets(c0)[0],
            () -> clientDoGets(c0)[0],
            () -> count[0] = table().count(),
            () -> count[1] = benchRead(TABLE, false).count());
    assertEquals(ROWS, count[0]);
    assertEquals(ROWS, count[1]);
    report.add(line("count(*)", counts, "Spark, pushed", "Spark, scanned"));

    // sum(c0), sum(c10): 2 of the 20 columns.
    ScanRequest two = ScanRequest.of(TABLE).withColumns("c0", "c10");
    long[] base = doGets(two);
    assertEquals(
        List.of(base[0], base[1], base[2]), Arrays.stream(clientDoGets(two)).boxed().toList());
    Row spark2 = table().selectExpr("sum(c0)", "sum(c10)").first();
    assertEquals(base[1], spark2.getLong(0));
    assertEquals((double) base[2], spark2.getDouble(1));
    double[] sums =
        rowsPerSecond(
            () -> doGets(two)[0],
            () -> clientDoGets(two)[0],
            () -> {
              table().selectExpr("sum(c0)", "sum(c10)").first();
              return ROWS;
            });
    report.add(line("sum(c0), sum(c10)", sums, "Spark"));

    // Spark's cost of a query itself: the same sum over a one-row table.
    for (int i = 0; i < WARMUPS; i++) {
      benchRead(TINY, true).selectExpr("sum(c0)").first();
    }
    double[] floor = new double[RUNS];
    for (int i = 0; i < RUNS; i++) {
      long start = System.nanoTime();
      benchRead(TINY, true).selectExpr("sum(c0)").first();
      floor[i] = (System.nanoTime() - start) / 1e6;
    }
    Arrays.sort(floor);
    report.add(
        String.format(
            "Spark sum(c0) of a 1-row table: %.0f ms; the DoGets of the sum take %.0f ms",
            floor[RUNS / 2], ROWS / sums[0] * 1e3));

    // The connector's own calls in the driver: the count's, and a scan's plan.
    report.add(
        String.format(
            "client calls: rowCount (table-stats) %.1f ms, plan (GetFlightInfo) %.1f ms",
            medianMs(() -> benchClient.rowCount(TABLE)), medianMs(() -> benchClient.plan(two))));

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

  /**
   * The timeline of the last of WARMUPS + 1 runs of a Spark sum over 2 of the 20 columns, a scanned
   * count(*) and a pushed one (the first runs warm up): when each planning phase, job, stage and
   * task ran.
   */
  @Test
  void timeline() throws Exception {
    QueryTimeline timeline = new QueryTimeline(spark);
    Map<String, Function<Dataset<Row>, Object>> queries = new LinkedHashMap<>();
    queries.put("sum(c0), sum(c10)", df -> df.selectExpr("sum(c0)", "sum(c10)").first());
    queries.put("count(*), scanned", Dataset::count);
    queries.put("count(*), pushed", Dataset::count);
    List<String> out = new ArrayList<>();
    for (Map.Entry<String, Function<Dataset<Row>, Object>> q : queries.entrySet()) {
      List<String> lines = List.of();
      for (int i = 0; i <= WARMUPS; i++) {
        timeline.clear();
        long start = System.currentTimeMillis();
        Dataset<Row> df = benchRead(TABLE, q.getKey().endsWith("pushed"));
        timeline.mark(System.currentTimeMillis(), "load() returns (the table's schema planned)");
        q.getValue().apply(df);
        timeline.mark(System.currentTimeMillis(), "returns");
        lines = timeline.lines(start);
      }
      out.add("Timeline of a Spark " + q.getKey() + " (ms from its start):");
      out.addAll(lines);
    }
    out.forEach(System.out::println);
  }

  private static String line(String what, double[] rates, String... spark) {
    StringBuilder b =
        new StringBuilder(
            String.format(
                "%-18s rows/s: Flight DoGets %,12.0f | fluxgate client %,12.0f (%.2f)",
                what, rates[0], rates[1], rates[1] / rates[0]));
    for (int i = 0; i < spark.length; i++) {
      b.append(
          String.format(" | %s %,12.0f (%.2f)", spark[i], rates[2 + i], rates[2 + i] / rates[0]));
    }
    return b.toString();
  }

  /**
   * The median rows per second of RUNS runs of each read, run in turns so that all see the same
   * load on a shared machine, after WARMUPS runs of each; each read returns its rows.
   */
  @SafeVarargs
  private static double[] rowsPerSecond(Supplier<Long>... reads) {
    for (int i = 0; i < WARMUPS; i++) {
      for (Supplier<Long> r : reads) {
        r.get();
      }
    }
    double[][] rates = new double[reads.length][RUNS];
    for (int i = 0; i < RUNS; i++) {
      for (int r = 0; r < reads.length; r++) {
        rates[r][i] = rate(reads[r]);
      }
    }
    double[] medians = new double[reads.length];
    for (int r = 0; r < reads.length; r++) {
      Arrays.sort(rates[r]);
      medians[r] = rates[r][RUNS / 2];
    }
    return medians;
  }

  /** The median milliseconds of RUNS calls of work, after WARMUPS. */
  private static double medianMs(Supplier<?> work) {
    for (int i = 0; i < WARMUPS; i++) {
      work.get();
    }
    double[] ms = new double[RUNS];
    for (int i = 0; i < RUNS; i++) {
      long start = System.nanoTime();
      work.get();
      ms[i] = (System.nanoTime() - start) / 1e6;
    }
    Arrays.sort(ms);
    return ms[RUNS / 2];
  }

  private static double rate(Supplier<Long> work) {
    long start = System.nanoTime();
    long rows = work.get();
    return rows / ((System.nanoTime() - start) / 1e9);
  }

  /**
   * Plans request and reads every endpoint with Arrow Java's FlightClient, one thread each as
   * Spark's local[2] does: the rows, and the sums of the BIGINT and DOUBLE columns read.
   */
  private static long[] doGets(ScanRequest request) {
    try (BufferAllocator allocator = new RootAllocator();
        FlightClient flight =
            FlightClient.builder(allocator, Location.forGrpcInsecure("127.0.0.1", bench.port))
                .build()) {
      return readAll(
          request,
          ticket -> {
            try (FlightStream s = flight.getStream(new Ticket(ticket))) {
              long[] out = new long[3];
              while (s.next()) {
                add(out, s.getRoot());
              }
              return out;
            }
          });
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** The same DoGets through the fluxgate Java client, which the connector reads with. */
  private static long[] clientDoGets(ScanRequest request) {
    return readAll(
        request,
        ticket -> {
          try (TicketStream s = benchClient.read(ticket)) {
            long[] out = new long[3];
            while (s.next()) {
              add(out, s.root());
            }
            return out;
          }
        });
  }

  /** Reads each ticket of request's plan on a thread of its own, adding up what each read. */
  private static long[] readAll(ScanRequest request, TicketRead read) {
    ScanPlan plan = benchClient.plan(request);
    ExecutorService pool = Executors.newFixedThreadPool(plan.tickets().size());
    try {
      List<Future<long[]>> parts = new ArrayList<>();
      for (byte[] ticket : plan.tickets()) {
        parts.add(pool.submit(() -> read.read(ticket)));
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

  interface TicketRead {
    long[] read(byte[] ticket) throws Exception;
  }

  /** Adds a batch's rows, and the sums of its BIGINT and DOUBLE columns, to out. */
  private static void add(long[] out, VectorSchemaRoot root) {
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
