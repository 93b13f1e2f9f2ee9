package io.fluxgate.client;

import static io.fluxgate.client.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Every type of the type table (PROTOCOL.md §2) survives a write and a scan unchanged. */
class TypesTest extends ServerTest {
  private static final List<Column> COLUMNS =
      List.of(
          Column.notNull("id", "INT"),
          Column.of("c_boolean", "BOOLEAN"),
          Column.of("c_tinyint", "TINYINT"),
          Column.of("c_smallint", "SMALLINT"),
          Column.of("c_bigint", "BIGINT"),
          Column.of("c_float", "FLOAT"),
          Column.of("c_double", "DOUBLE"),
          Column.of("c_decimal", "DECIMAL(10,2)"),
          Column.of("c_string", "STRING"),
          Column.of("c_varchar", "VARCHAR(10)"),
          Column.of("c_char", "CHAR(3)"),
          Column.of("c_bytes", "BYTES"),
          Column.of("c_varbinary", "VARBINARY(8)"),
          Column.of("c_binary", "BINARY(4)"),
          Column.of("c_date", "DATE"),
          Column.of("c_time3", "TIME(3)"),
          Column.of("c_time6", "TIME(6)"),
          Column.of("c_time9", "TIME(9)"),
          Column.of("c_ts3", "TIMESTAMP(3)"),
          Column.of("c_ts6", "TIMESTAMP(6)"),
          Column.of("c_ts9", "TIMESTAMP(9)"),
          Column.of("c_ltz3", "TIMESTAMP_LTZ(3)"),
          Column.of("c_ltz6", "TIMESTAMP_LTZ"),
          Column.of("c_array", "ARRAY<INT>"),
          Column.of("c_map", "MAP<STRING, INT>"),
          Column.of("c_row", "ROW<a INT, b STRING>"));

  private static final List<Object> VALUES =
      row(
          1,
          true,
          (byte) -7,
          (short) 300,
          1L << 40,
          1.5f,
          -2.25,
          new BigDecimal("12345.67"),
          "héllo ✓",
          "varchar",
          "abc",
          new byte[] {0, 1, 2, (byte) 255},
          new byte[] {9},
          new byte[] {1, 2, 3, 4},
          20_000,
          3_600_123,
          3_600_000_001L,
          3_600_000_000_002L,
          1_700_000_000_123L,
          1_700_000_000_123_456L,
          1_700_000_000_123_456_789L,
          1_700_000_000_124L,
          1_700_000_000_123_457L,
          List.of(1, 2, 3),
          Map.of("k", 1),
          Map.of("a", 5, "b", "five"));

  @ParameterizedTest(name = "write {0}, read {1}")
  @CsvSource({"NONE, NONE", "ZSTD, ZSTD", "LZ4_FRAME, NONE", "NONE, ZSTD"})
  void everyTypeRoundTrips(Compression write, Compression read) {
    String name = table("types");
    client.createTable(new TableSpec(name, COLUMNS, List.of(), List.of(), Map.of(), null), false);
    Schema schema = Rows.schema(client, name);
    List<Object> nulls = new ArrayList<>();
    nulls.add(2);
    for (int i = 1; i < COLUMNS.size(); i++) {
      nulls.add(null);
    }
    List<List<Object>> written;
    try (VectorSchemaRoot batch = Rows.batch(allocator, schema, List.of(VALUES, nulls));
        TableWriter w = client.newWriter(WriteRequest.of(name), write, 4)) {
      written = Rows.rows(batch);
      PutResult res = w.write(batch);
      assertEquals(2, res.rows());
    }
    assertEquals(written, Rows.read(client, ScanRequest.of(name).withCompression(read)));
  }
}
