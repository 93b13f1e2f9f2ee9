package io.fluxgate.flink.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fluxgate.client.Column;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.PutResult;
import io.fluxgate.client.ScanRequest;
import io.fluxgate.client.TableSpec;
import io.fluxgate.client.TableWriter;
import io.fluxgate.client.WriteRequest;
import io.fluxgate.flink.ArrowRows;
import io.fluxgate.flink.ServerExtension;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.BooleanType;
import org.apache.flink.table.types.logical.DateType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.DoubleType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimeType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarBinaryType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The sink's buckets are the server's: Iceberg's vectors, and many keys the server assigns. */
@Timeout(60)
public class BucketerTest {
  @RegisterExtension static final ServerExtension SERVER = new ServerExtension();

  private static int hash(LogicalType type, Object value) {
    RowType row = RowType.of(new LogicalType[] {type}, new String[] {"k"});
    return new Bucketer(row, List.of("k"), 1).hash(GenericRowData.of(value));
  }

  /** The Iceberg spec's hash vectors (Appendix B), as the Go bucketing tests check them. */
  @Test
  void icebergSpecVectors() {
    assertEquals(2017239379, hash(new IntType(), 34));
    assertEquals(2017239379, hash(new BigIntType(), 34L));
    assertEquals(
        -500754589,
        hash(new DecimalType(9, 2), DecimalData.fromBigDecimal(new BigDecimal("14.20"), 9, 2)));
    assertEquals(-653330422, hash(new DateType(), (int) LocalDate.of(2017, 11, 16).toEpochDay()));
    assertEquals(-662762989, hash(new TimeType(3), (22 * 3600 + 31 * 60 + 8) * 1000));
    LocalDateTime ts = LocalDateTime.of(2017, 11, 16, 22, 31, 8);
    assertEquals(-2047944441, hash(new TimestampType(6), TimestampData.fromLocalDateTime(ts)));
    assertEquals(
        -1207196810,
        hash(new TimestampType(6), TimestampData.fromLocalDateTime(ts.plusNanos(1000))));
    assertEquals(
        -2047944441, hash(new LocalZonedTimestampType(6), TimestampData.fromLocalDateTime(ts)));
    assertEquals(1210000089, hash(new VarCharType(), StringData.fromString("iceberg")));
    assertEquals(-188683207, hash(new VarBinaryType(), new byte[] {0, 1, 2, 3}));
  }

  /**
   * Rows of every key type, NULLs among them, each in its own batch: the server says its bucket.
   */
  @Test
  void equalsTheServersBucketForManyKeys() {
    String[] names = {"i", "s", "d", "ts", "dt", "b", "f", "bin", "t", "ltz"};
    String[] sqlTypes = {
      "INT",
      "STRING",
      "DECIMAL(10,2)",
      "TIMESTAMP(6)",
      "DATE",
      "BOOLEAN",
      "DOUBLE",
      "BYTES",
      "TIME(3)",
      "TIMESTAMP_LTZ(3)"
    };
    LogicalType[] types = {
      new IntType(),
      new VarCharType(VarCharType.MAX_LENGTH),
      new DecimalType(10, 2),
      new TimestampType(6),
      new DateType(),
      new BooleanType(),
      new DoubleType(),
      new VarBinaryType(VarBinaryType.MAX_LENGTH),
      new TimeType(3),
      new LocalZonedTimestampType(3)
    };
    RowType rowType = RowType.of(types, names);
    int buckets = 7;
    List<Column> columns = new ArrayList<>();
    for (int i = 0; i < names.length; i++) {
      columns.add(Column.of(names[i], sqlTypes[i]));
    }
    String table = "fluss.bucketed";
    Random random = new Random(42);
    List<RowData> rows = new ArrayList<>();
    for (int n = 0; n < 300; n++) {
      rows.add(randomRow(random, types.length));
    }
    Bucketer bucketer = new Bucketer(rowType, List.of(names), buckets);
    try (RootAllocator allocator = new RootAllocator();
        FluxgateClient client =
            FluxgateClient.connect(
                SERVER.uri(),
                io.fluxgate.client.ConnectOptions.defaults().withAllocator(allocator))) {
      client.createTable(
          TableSpec.of(table, columns.toArray(Column[]::new))
              .withOptions(
                  Map.of("bucket.num", "" + buckets, "bucket.key", String.join(",", names))),
          false);
      List<PutResult> results;
      try (VectorSchemaRoot root =
              VectorSchemaRoot.create(client.plan(ScanRequest.of(table)).schema(), allocator);
          TableWriter writer = client.newWriter(WriteRequest.of(table))) {
        List<FieldVector> vectors = root.getFieldVectors();
        for (RowData row : rows) {
          root.allocateNew();
          for (int c = 0; c < types.length; c++) {
            ArrowRows.write(
                vectors.get(c),
                ArrowRows.setter(vectors.get(c), types[c]),
                0,
                RowData.createFieldGetter(types[c], c).getFieldOrNull(row));
          }
          root.setRowCount(1);
          writer.send(root);
        }
        results = writer.flush();
      }
      for (int n = 0; n < rows.size(); n++) {
        Map<Integer, Long> touched = results.get(n).buckets();
        assertEquals(1, touched.size(), "row " + n + " went to " + touched);
        assertEquals(
            touched.keySet().iterator().next(),
            bucketer.bucket(rows.get(n)),
            "bucket of row " + n + ": " + rows.get(n));
      }
    }
  }

  private static RowData randomRow(Random r, int columns) {
    GenericRowData row = new GenericRowData(columns);
    long micros = r.nextLong(-2_000_000_000_000_000L, 4_000_000_000_000_000L);
    Object[] values = {
      r.nextInt(),
      StringData.fromString("k" + r.nextInt(1000) + "é"),
      DecimalData.fromUnscaledLong(r.nextLong(-99_999_999L, 99_999_999L), 10, 2),
      TimestampData.fromEpochMillis(
          Math.floorDiv(micros, 1000), (int) Math.floorMod(micros, 1000) * 1000),
      r.nextInt(-20000, 40000),
      r.nextBoolean(),
      r.nextInt(4) == 0 ? -0.0 : r.nextGaussian() * 1e6,
      ("b" + r.nextInt(100)).getBytes(StandardCharsets.UTF_8),
      r.nextInt(86_400_000),
      TimestampData.fromEpochMillis(r.nextLong(-1_000_000_000_000L, 4_000_000_000_000L))
    };
    for (int c = 0; c < columns; c++) {
      row.setField(c, r.nextInt(8) == 0 ? null : values[c]);
    }
    return row;
  }
}
