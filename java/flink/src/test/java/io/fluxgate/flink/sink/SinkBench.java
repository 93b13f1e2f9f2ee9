package io.fluxgate.flink.sink;

import io.fluxgate.client.Column;
import io.fluxgate.client.Compression;
import io.fluxgate.client.ConnectionSettings;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.FluxgateServer;
import io.fluxgate.client.ScanRequest;
import io.fluxgate.client.TableSpec;
import io.fluxgate.client.TableWriter;
import io.fluxgate.client.WriteRequest;
import io.fluxgate.flink.ArrowRows;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;

/**
 * The Flink sink's throughput into a 20-column ZSTD log table (the shape of `fluxgate bench`'s
 * event table), beside the Java client's own pipelined writer on the same generated rows in the
 * same JVM. Not a test: run by hand (docs/benchmarks.md, "Flink sink"), with FLUXGATE_BIN set.
 *
 * <p>Arguments: rows (default 2,000,000), parallelism (default 2), repetitions (default 3).
 */
public final class SinkBench {
  static final String[] NAMES = {
    "ts", "event_id", "user_id", "session_id", "event_type", "page_id", "product_id", "quantity",
    "amount", "currency", "country", "region", "device", "os", "browser", "app_version",
    "latency_ms", "is_mobile", "referrer", "campaign_id"
  };
  static final String[] SQL = {
    "BIGINT", "BIGINT", "BIGINT", "BIGINT", "STRING", "BIGINT", "BIGINT", "INT", "DOUBLE",
    "STRING", "STRING", "STRING", "STRING", "STRING", "STRING", "STRING", "INT", "BOOLEAN",
    "STRING", "BIGINT"
  };

  public static void main(String[] args) throws Exception {
    int rows = args.length > 0 ? Integer.parseInt(args[0]) : 2_000_000;
    int parallelism = args.length > 1 ? Integer.parseInt(args[1]) : 2;
    int reps = args.length > 2 ? Integer.parseInt(args[2]) : 3;
    RowType rowType = rowType();
    Path dir = Files.createTempDirectory("sinkbench");
    try (FluxgateServer server = FluxgateServer.start(dir);
        FluxgateClient client = FluxgateClient.connect(server.uri())) {
      for (int rep = 0; rep < reps; rep++) {
        String clientTable = table(client, "client_" + rep);
        long t0 = System.nanoTime();
        clientWrite(client, clientTable, rowType, rows);
        double clientSecs = (System.nanoTime() - t0) / 1e9;

        String flinkTable = table(client, "flink_" + rep);
        Events.firstRow.set(0);
        t0 = System.nanoTime();
        flinkWrite(server.uri(), flinkTable, rowType, rows, parallelism);
        long end = System.nanoTime();
        double flinkSecs = (end - t0) / 1e9;
        double flowingSecs = (end - Events.firstRow.get()) / 1e9;
        System.out.printf(
            "rep %d: %,d rows × 20 columns; java client writer %.0f rows/s; flink sink"
                + " (parallelism %d) %.0f rows/s from its first row, %.0f rows/s with the job's"
                + " start; ratio %.2f (%.2f)%n",
            rep,
            rows,
            rows / clientSecs,
            parallelism,
            rows / flowingSecs,
            rows / flinkSecs,
            clientSecs / flowingSecs,
            clientSecs / flinkSecs);
      }
    }
  }

  static RowType rowType() {
    LogicalType[] types = new LogicalType[SQL.length];
    for (int i = 0; i < SQL.length; i++) {
      types[i] =
          switch (SQL[i]) {
            case "BIGINT" -> new BigIntType();
            case "INT" -> new IntType();
            case "DOUBLE" -> new DoubleType();
            case "BOOLEAN" -> new BooleanType();
            default -> new VarCharType(VarCharType.MAX_LENGTH);
          };
    }
    return RowType.of(types, NAMES);
  }

  static String table(FluxgateClient client, String name) {
    List<Column> columns = new ArrayList<>();
    for (int i = 0; i < NAMES.length; i++) {
      columns.add(Column.of(NAMES[i], SQL[i]));
    }
    String table = "fluss.events_" + name;
    client.createTable(TableSpec.of(table, columns.toArray(Column[]::new)), false);
    return table;
  }

  /** The baseline: the Java client's pipelined writer, 8,192-row ZSTD batches, 16 in flight. */
  static void clientWrite(FluxgateClient client, String table, RowType rowType, int rows) {
    Events events = new Events();
    try (RootAllocator allocator = new RootAllocator();
        VectorSchemaRoot root =
            VectorSchemaRoot.create(client.plan(ScanRequest.of(table)).schema(), allocator);
        TableWriter writer = client.newWriter(WriteRequest.of(table), Compression.ZSTD, 16)) {
      List<FieldVector> vectors = root.getFieldVectors();
      ArrowRows.Setter[] setters = new ArrowRows.Setter[NAMES.length];
      RowData.FieldGetter[] getters = new RowData.FieldGetter[NAMES.length];
      for (int c = 0; c < NAMES.length; c++) {
        setters[c] = ArrowRows.setter(vectors.get(c), rowType.getTypeAt(c));
        getters[c] = RowData.createFieldGetter(rowType.getTypeAt(c), c);
      }
      int n = 0;
      root.allocateNew();
      for (long i = 0; i < rows; i++) {
        RowData row = events.map(i);
        for (int c = 0; c < NAMES.length; c++) {
          ArrowRows.write(vectors.get(c), setters[c], n, getters[c].getFieldOrNull(row));
        }
        if (++n == FluxgateTableSink.BATCH_ROWS || i == rows - 1) {
          root.setRowCount(n);
          writer.send(root);
          root.clear();
          root.allocateNew();
          n = 0;
        }
      }
      writer.flush();
    }
  }

  /** The Flink sink as the SQL planner builds it for a log table, fed by a generator source. */
  static void flinkWrite(String uri, String table, RowType rowType, int rows, int parallelism)
      throws Exception {
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
    env.setParallelism(parallelism);
    int[] all = java.util.stream.IntStream.range(0, NAMES.length).toArray();
    SinkSpec spec =
        new SinkSpec(
            table,
            rowType,
            all,
            false,
            false,
            false,
            FluxgateTableSink.BATCH_ROWS,
            null,
            false,
            null,
            true);
    env.fromSource(
            new DataGeneratorSource<>(new Events(), rows, InternalTypeInfo.of(rowType)),
            WatermarkStrategy.noWatermarks(),
            "events")
        .sinkTo(new FluxgateSink(ConnectionSettings.of(uri), spec));
    env.execute("sink bench");
  }

  /** Row i of the event table, the same for both writers: skewed values, some NULLs. */
  static final class Events implements GeneratorFunction<Long, RowData> {
    /** When the first row was made (System.nanoTime): the Flink job runs in this JVM. */
    static final AtomicLong firstRow = new AtomicLong();

    private static final StringData[] TYPES =
        strings(
            "page_view", "page_view", "page_view", "click", "search", "add_to_cart", "purchase");
    private static final StringData[] COUNTRIES = strings("US", "US", "DE", "GB", "FR", "IN", "BR");
    private static final StringData[] CURRENCIES =
        strings("USD", "USD", "EUR", "GBP", "EUR", "INR", "BRL");
    private static final StringData[] REGIONS =
        strings("us-east", "us-east", "eu-central", "eu-west", "eu-west", "ap-south", "sa-east");
    private static final StringData[] DEVICES = strings("mobile", "mobile", "desktop", "tablet");
    private static final StringData[] OS = strings("android", "ios", "windows", "ipados");
    private static final StringData[] BROWSERS = strings("chrome", "chrome", "safari", "edge");
    private static final StringData[] VERSIONS = strings("5.14.2", "5.14.1", "5.13.0", "4.9.0");
    private static final StringData[] REFERRERS = strings("direct", "google", "email", "partner");

    private static StringData[] strings(String... values) {
      StringData[] out = new StringData[values.length];
      for (int i = 0; i < values.length; i++) {
        out[i] = StringData.fromString(values[i]);
      }
      return out;
    }

    @Override
    public RowData map(Long index) {
      if (firstRow.get() == 0) {
        firstRow.compareAndSet(0, System.nanoTime());
      }
      long i = index;
      SplittableRandom r = new SplittableRandom(i * 0x9E3779B97F4A7C15L);
      long ts = 1_764_489_600_000L + i;
      long user = 1 + (long) Math.pow(r.nextDouble(), 3) * 999_999;
      int type = r.nextInt(TYPES.length);
      int country = r.nextInt(COUNTRIES.length);
      int device = r.nextInt(DEVICES.length);
      boolean product = type >= 5 || r.nextInt(4) == 0;
      GenericRowData row = new GenericRowData(20);
      row.setField(0, ts);
      row.setField(1, i + 1);
      row.setField(2, user);
      row.setField(3, user * 100_000 + ts / 1_800_000 % 100_000);
      row.setField(4, TYPES[type]);
      row.setField(5, 1 + (long) Math.pow(r.nextDouble(), 4) * 9_999);
      row.setField(6, product ? 1 + r.nextLong(50_000) : null);
      row.setField(7, product ? 1 + r.nextInt(3) : null);
      row.setField(
          8, type >= 5 ? Math.round(Math.exp(r.nextGaussian() * 0.9 + 3.2) * 100) / 100.0 : 0.0);
      row.setField(9, CURRENCIES[country]);
      row.setField(10, COUNTRIES[country]);
      row.setField(11, REGIONS[country]);
      row.setField(12, DEVICES[device]);
      row.setField(13, OS[device]);
      row.setField(14, BROWSERS[r.nextInt(BROWSERS.length)]);
      row.setField(15, VERSIONS[r.nextInt(VERSIONS.length)]);
      row.setField(16, (int) Math.exp(r.nextGaussian() * 0.6 + 4));
      row.setField(17, device != 2);
      row.setField(18, REFERRERS[r.nextInt(REFERRERS.length)]);
      row.setField(19, r.nextInt(5) == 0 ? 1 + r.nextLong(500) : null);
      return row;
    }
  }
}
