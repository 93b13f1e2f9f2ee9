package io.fluxgate.client;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * The Java client's durable append into log tables of the narrow shape of the JetStream peer (8
 * columns: 4 BIGINT, 2 DOUBLE, 2 twelve-byte STRING; 8,192-row batches, 4 buckets), sending batches
 * uncompressed (what newWriter(request) did before it compressed ZSTD tables' by default) and
 * ZSTD-compressed (what it does now), interleaved in one JVM, beside an LZ4 table sent
 * uncompressed. (LZ4 batches compressed by Arrow Java are not measured: its pure-Java codec did not
 * get through 200,000 rows in 8 minutes.) Then Arrow Java's reads (the client's Scanner) of the
 * last ZSTD table: as stored (ZSTD batches the client decompresses) against uncompressed,
 * interleaved. Not a test: run by hand (docs/benchmarks.md, "Peer: NATS JetStream"), with
 * FLUXGATE_BIN set.
 *
 * <p>Arguments: rows (default 2,000,000), repetitions (default 3).
 */
public final class WriterBench {
  private static final int BATCH_ROWS = 8192;

  /** A table's codec, and what the writer sends to it. */
  private record Mode(String name, String tableCodec, Compression sent) {}

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 2_000_000;
    int reps = args.length > 1 ? Integer.parseInt(args[1]) : 3;
    List<Mode> modes =
        List.of(
            new Mode("zstd table, sent uncompressed (before)", "zstd", Compression.NONE),
            new Mode("zstd table, sent zstd (default now)", "zstd", Compression.ZSTD),
            new Mode("lz4 table, sent uncompressed (default)", "lz4_frame", Compression.NONE));
    double[][] rates = new double[modes.size()][reps];
    double[][] reads = new double[2][reps]; // as stored, none
    Path dir = Files.createTempDirectory("writerbench");
    try (BufferAllocator allocator = new RootAllocator();
        FluxgateServer server = FluxgateServer.start(dir);
        FluxgateClient client = FluxgateClient.connect(server.uri())) {
      List<VectorSchemaRoot> batches = narrow(allocator, rows);
      try {
        for (int rep = 0; rep < reps; rep++) {
          for (int k = 0; k < modes.size(); k++) {
            // Interleaved, the order turned round every other repetition.
            int m = rep % 2 == 0 ? k : modes.size() - 1 - k;
            rates[m][rep] = append(client, batches, rows, modes.get(m), rep);
          }
        }
      } finally {
        batches.forEach(VectorSchemaRoot::close);
      }
      String zstd = "fluss.bench_zstd_zstd_" + (reps - 1);
      for (int rep = 0; rep < reps; rep++) {
        for (int k = 0; k < 2; k++) {
          int m = rep % 2 == 0 ? k : 1 - k;
          reads[m][rep] = read(client, zstd, m == 0 ? null : Compression.NONE, rows);
        }
      }
    }
    System.out.printf(
        "%-40s median %6.2f M rows/s  runs %s%n",
        "read zstd table as stored", median(reads[0]) / 1e6, Arrays.toString(reads[0]));
    System.out.printf(
        "%-40s median %6.2f M rows/s  runs %s%n",
        "read zstd table asking for none", median(reads[1]) / 1e6, Arrays.toString(reads[1]));
    for (int m = 0; m < modes.size(); m++) {
      System.out.printf(
          "%-40s median %6.2f M rows/s  runs %s%n",
          modes.get(m).name(), median(rates[m]) / 1e6, Arrays.toString(rates[m]));
    }
  }

  private static double append(
      FluxgateClient client, List<VectorSchemaRoot> batches, int rows, Mode mode, int rep) {
    String table = "fluss.bench_" + mode.tableCodec() + "_" + mode.sent().wire() + "_" + rep;
    client.createTable(
        TableSpec.of(
                table,
                Column.of("ts", "BIGINT"),
                Column.of("seq", "BIGINT"),
                Column.of("device", "BIGINT"),
                Column.of("count", "BIGINT"),
                Column.of("value", "DOUBLE"),
                Column.of("ratio", "DOUBLE"),
                Column.of("site", "STRING"),
                Column.of("status", "STRING"))
            .withOptions(
                Map.of("table.log.arrow.compression.type", mode.tableCodec(), "bucket.num", "4")),
        false);
    long start = System.nanoTime();
    try (TableWriter w = client.newWriter(WriteRequest.of(table), mode.sent(), 16)) {
      for (VectorSchemaRoot b : batches) {
        w.send(b);
      }
      w.flush();
    }
    return rows / ((System.nanoTime() - start) / 1e9);
  }

  private static double read(
      FluxgateClient client, String table, Compression compression, int rows) {
    long start = System.nanoTime();
    long n = 0;
    try (Scanner sc = client.scan(ScanRequest.of(table).withCompression(compression))) {
      while (sc.next()) {
        n += sc.root().getRowCount();
      }
    }
    if (n != rows) {
      throw new IllegalStateException("read " + n + " rows of " + table + ", want " + rows);
    }
    return rows / ((System.nanoTime() - start) / 1e9);
  }

  /** Readings of devices, in batches: ascending times, skewed devices, sites and statuses. */
  private static List<VectorSchemaRoot> narrow(BufferAllocator allocator, int rows) {
    Random rng = new Random(20261201);
    List<VectorSchemaRoot> out = new ArrayList<>();
    long ts = 1_796_112_000_000L;
    for (int from = 0; from < rows; from += BATCH_ROWS) {
      int n = Math.min(BATCH_ROWS, rows - from);
      VectorSchemaRoot root =
          VectorSchemaRoot.of(
              new BigIntVector("ts", allocator),
              new BigIntVector("seq", allocator),
              new BigIntVector("device", allocator),
              new BigIntVector("count", allocator),
              new Float8Vector("value", allocator),
              new Float8Vector("ratio", allocator),
              new VarCharVector("site", allocator),
              new VarCharVector("status", allocator));
      root.allocateNew();
      for (int i = 0; i < n; i++) {
        ts += rng.nextInt(3);
        ((BigIntVector) root.getVector(0)).setSafe(i, ts);
        ((BigIntVector) root.getVector(1)).setSafe(i, from + i);
        ((BigIntVector) root.getVector(2)).setSafe(i, skewed(rng, 100_000));
        ((BigIntVector) root.getVector(3)).setSafe(i, (long) rng.nextInt(4) * rng.nextInt(4));
        ((Float8Vector) root.getVector(4))
            .setSafe(i, Math.round((20 + rng.nextGaussian() * 5) * 100) / 100.0);
        ((Float8Vector) root.getVector(5)).setSafe(i, rng.nextDouble());
        ((VarCharVector) root.getVector(6))
            .setSafe(
                i, String.format("site-%07d", skewed(rng, 500)).getBytes(StandardCharsets.UTF_8));
        ((VarCharVector) root.getVector(7))
            .setSafe(
                i, String.format("status-%05d", skewed(rng, 6)).getBytes(StandardCharsets.UTF_8));
      }
      root.setRowCount(n);
      out.add(root);
    }
    return out;
  }

  /** A value in [0, n), small ones far likelier (about Zipf's skew). */
  private static long skewed(Random rng, int n) {
    double u = rng.nextDouble();
    return (long) (n * u * u * u);
  }

  private static double median(double[] xs) {
    double[] s = xs.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }
}
