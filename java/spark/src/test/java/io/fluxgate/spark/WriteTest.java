package io.fluxgate.spark;

import static io.fluxgate.client.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.Column;
import io.fluxgate.client.ScanRequest;
import io.fluxgate.client.Scanner;
import io.fluxgate.client.TableSpec;
import java.math.BigDecimal;
import java.sql.Date;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

class WriteTest extends SparkServerTest {
  private static void append(Dataset<Row> df, String table) {
    df.write()
        .format("fluxgate")
        .option("endpoint", server.uri())
        .option("table", table)
        .mode("append")
        .save();
  }

  /** Rows of a DataFrame as sorted JSON, a comparison that holds for maps and binary too. */
  private static List<String> json(Dataset<Row> df) {
    List<String> out = new ArrayList<>(df.toJSON().collectAsList());
    out.sort(null);
    return out;
  }

  /** 12:34:56.789 and 12:34:56.789123456 as Spark holds a TIME: nanoseconds since midnight. */
  private static final long T3_NANOS = 45_296_789_000_000L;

  private static final long T9_NANOS = 45_296_789_123_456L;

  @Test
  void everyTypeRoundTrips() {
    String name = table("types");
    client.createTable(
        TableSpec.of(
            name,
            Column.of("b", "BOOLEAN"),
            Column.of("i8", "TINYINT"),
            Column.of("i16", "SMALLINT"),
            Column.of("i32", "INT"),
            Column.of("i64", "BIGINT"),
            Column.of("f32", "FLOAT"),
            Column.of("f64", "DOUBLE"),
            Column.of("dec", "DECIMAL(10,2)"),
            Column.of("s", "STRING"),
            Column.of("bin", "BYTES"),
            Column.of("dt", "DATE"),
            Column.of("ts3", "TIMESTAMP(3)"),
            Column.of("ts6", "TIMESTAMP(6)"),
            Column.of("ts9", "TIMESTAMP(9)"),
            Column.of("ltz3", "TIMESTAMP_LTZ(3)"),
            Column.of("ltz6", "TIMESTAMP_LTZ(6)"),
            Column.of("arr", "ARRAY<INT>"),
            Column.of("m", "MAP<STRING, INT>"),
            Column.of("r", "ROW<a INT, b STRING>"),
            Column.of("big", "DECIMAL(38,18)"),
            Column.of("vc", "VARCHAR(10)"),
            Column.of("ch", "CHAR(5)"),
            Column.of("fixed", "BINARY(3)"),
            Column.of("ltz9", "TIMESTAMP_LTZ(9)"),
            Column.of("t0", "TIME(0)"),
            Column.of("t3", "TIME(3)"),
            Column.of("t6", "TIME(6)"),
            Column.of("t9", "TIME(9)"),
            Column.of("arr_ts3", "ARRAY<TIMESTAMP(3)>"),
            Column.of("m_ltz9", "MAP<STRING, TIMESTAMP_LTZ(9)>"),
            Column.of("r_times", "ROW<t TIME(3), ts TIMESTAMP(9)>"),
            Column.of("arr_r", "ARRAY<ROW<ts TIMESTAMP(3)>>")),
        false);
    StructType schema = read(name).schema();
    LocalDateTime ldt = LocalDateTime.of(2026, 11, 30, 12, 34, 56, 789_000_000);
    Timestamp instant = Timestamp.from(Instant.parse("2026-11-30T12:34:56.789Z"));
    Timestamp micros = Timestamp.from(Instant.parse("2026-11-30T12:34:56.789123Z"));
    List<Row> rows =
        List.of(
            RowFactory.create(
                true,
                (byte) -8,
                (short) 1600,
                32,
                64L,
                1.5f,
                -2.25,
                new BigDecimal("12345678.90"),
                "héllo",
                new byte[] {0, 1, (byte) 0xff},
                Date.valueOf("2026-11-30"),
                ldt,
                ldt.withNano(789_123_000),
                ldt.withNano(789_123_000),
                instant,
                instant,
                List.of(1, 2, 3),
                Map.of("k", 7),
                RowFactory.create(5, "five"),
                new BigDecimal("12345678901234567890.123456789012345678"),
                "varchar",
                "héllo",
                new byte[] {7, 8, 9},
                micros,
                T3_NANOS / 1_000_000_000 * 1_000_000_000,
                T3_NANOS,
                T9_NANOS / 1_000 * 1_000,
                T9_NANOS,
                List.of(ldt),
                Map.of("k", micros),
                RowFactory.create(T3_NANOS, ldt.withNano(789_123_000)),
                List.of(RowFactory.create(ldt))),
            RowFactory.create(new Object[32]));
    Dataset<Row> df = spark.createDataFrame(rows, schema);
    append(df, name);
    assertEquals(json(df), json(read(name)));
  }

  /**
   * Times and timestamps not in Spark's form, at any depth, reach the table in its units: a TIME is
   * Spark's nanoseconds since midnight, a timestamp Spark's microseconds.
   */
  @Test
  void timesAndNestedTimestampsAreStoredInTheTablesUnits() {
    String name = table("units");
    client.createTable(
        TableSpec.of(
            name,
            Column.of("t3", "TIME(3)"),
            Column.of("t6", "TIME(6)"),
            Column.of("arr_ts3", "ARRAY<TIMESTAMP(3)>"),
            Column.of("r", "ROW<t TIME(3), ts TIMESTAMP_LTZ(9)>")),
        false);
    StructType schema = read(name).schema();
    assertEquals(DataTypes.LongType, schema.apply("t3").dataType());
    assertEquals(ArrowTypes.TIME_COMMENT, schema.apply("t3").getComment().get());
    LocalDateTime ldt = LocalDateTime.of(2026, 11, 30, 12, 34, 56, 789_000_000);
    Timestamp micros = Timestamp.from(Instant.parse("2026-11-30T12:34:56.789123Z"));
    append(
        spark.createDataFrame(
            List.of(
                RowFactory.create(
                    T3_NANOS,
                    T9_NANOS / 1_000 * 1_000,
                    List.of(ldt),
                    RowFactory.create(T3_NANOS, micros))),
            schema),
        name);

    long epochMs = ldt.toInstant(ZoneOffset.UTC).toEpochMilli();
    long epochNs = ChronoUnit.NANOS.between(Instant.EPOCH, micros.toInstant());
    try (Scanner s = client.scan(ScanRequest.of(name))) {
      assertTrue(s.next());
      VectorSchemaRoot root = s.root();
      assertEquals(1, root.getRowCount());
      assertEquals(45_296_789, ((TimeMilliVector) root.getVector("t3")).get(0));
      assertEquals(45_296_789_123L, ((TimeMicroVector) root.getVector("t6")).get(0));
      ListVector arr = (ListVector) root.getVector("arr_ts3");
      assertEquals(epochMs, ((TimeStampVector) arr.getDataVector()).get(0));
      StructVector r = (StructVector) root.getVector("r");
      assertEquals(45_296_789, ((TimeMilliVector) r.getChild("t")).get(0));
      assertEquals(epochNs, ((TimeStampVector) r.getChild("ts")).get(0));
    }
    assertEquals(
        List.of(row(T3_NANOS, T9_NANOS / 1_000 * 1_000, ldt, micros)),
        rows(read(name).selectExpr("t3", "t6", "arr_ts3[0]", "r.ts")));
  }

  @Test
  void upsertThenPartialUpdateOfPrimaryKeyTable() {
    String name = table("pk");
    client.createTable(
        TableSpec.of(
                name,
                Column.notNull("id", "BIGINT"),
                Column.of("a", "STRING"),
                Column.of("b", "INT"))
            .withPrimaryKey("id")
            .withOptions(Map.of("bucket.num", "2")),
        false);
    StructType schema = read(name).schema();
    append(
        spark.createDataFrame(
            List.of(RowFactory.create(1L, "one", 1), RowFactory.create(2L, "two", 2)), schema),
        name);
    append(spark.createDataFrame(List.of(RowFactory.create(2L, "TWO", 20)), schema), name);
    assertEquals(List.of(row(1L, "one", 1), row(2L, "TWO", 20)), rows(read(name).orderBy("id")));

    Dataset<Row> onlyB = spark.sql("SELECT CAST(1 AS BIGINT) AS id, 100 AS b");
    append(onlyB, name);
    assertEquals(
        List.of(row(1L, "one", 100), row(2L, "TWO", 20)),
        rows(read(name).orderBy("id")),
        "a partial update of b leaves a as it was");
  }

  @Test
  void appendToLogTableThroughSqlInsert() {
    String name = table("log");
    client.createTable(
        TableSpec.of(name, Column.of("id", "BIGINT"), Column.of("s", "STRING")), false);
    spark.sql("INSERT INTO fg." + name + " VALUES (1L, 'a'), (2L, 'b')");
    Dataset<Row> more = spark.range(3, 1003).selectExpr("id", "CAST(id AS STRING) AS s");
    append(more.repartition(3), name);
    Dataset<Row> back = read(name);
    assertEquals(1002, back.count());
    assertEquals(
        List.of(row(1L, "a"), row(2L, "b"), row(3L, "3")), rows(back.orderBy("id").limit(3)));
  }

  @Test
  void nullabilityOfTheDataFrameNeedNotMatch() {
    String name = table("nested");
    client.createTable(
        TableSpec.of(name, Column.of("id", "BIGINT"), Column.of("r", "ROW<a INT, b STRING>")),
        false);
    // named_struct's fields are NOT NULL in Spark, the table's are nullable.
    append(spark.sql("SELECT 1L AS id, named_struct('a', 1, 'b', 'x') AS r"), name);
    assertEquals(List.of(row(1L, 1, "x")), rows(read(name).selectExpr("id", "r.a", "r.b")));
  }

  /** fluxgate does not truncate tables (Fluss neither): overwriting is refused, saying so. */
  @Test
  void overwriteIsRefusedSayingWhy() {
    String name = table("kept");
    client.createTable(TableSpec.of(name, Column.of("id", "BIGINT")), false);
    append(spark.sql("SELECT 1L AS id"), name);
    Exception e =
        assertThrows(
            Exception.class,
            () ->
                spark
                    .sql("SELECT 2L AS id")
                    .write()
                    .format("fluxgate")
                    .option("endpoint", server.uri())
                    .option("table", name)
                    .mode("overwrite")
                    .save());
    assertTrue(messages(e).contains("fluxgate does not truncate " + name), messages(e));
    assertTrue(messages(e).contains("mode(\"append\")"), messages(e));
    assertEquals(List.of(row(1L)), rows(read(name)));
  }

  /** As Spark inserts into its own tables: plain literals are cast to the columns' types. */
  @Test
  void typesAreCastAsSparkStoresThem() {
    String name = table("cast");
    client.createTable(
        TableSpec.of(
            name,
            Column.of("id", "BIGINT"),
            Column.of("amount", "DOUBLE"),
            Column.of("price", "DECIMAL(10,2)"),
            Column.of("note", "STRING")),
        false);
    spark.sql("INSERT INTO fg." + name + " VALUES (1, 50.0, 2.5, 'a'), (2, 7, 3, 'b')");
    append(spark.sql("SELECT 3 AS id, CAST(1.5 AS FLOAT) AS amount, 1L AS price, 5 AS note"), name);
    assertEquals(
        List.of(
            row(1L, 50.0, new BigDecimal("2.50"), "a"),
            row(2L, 7.0, new BigDecimal("3.00"), "b"),
            row(3L, 1.5, new BigDecimal("1.00"), "5")),
        rows(read(name).orderBy("id")));
  }

  /** A value its column cannot hold fails the write, naming the column; nothing of it is stored. */
  @Test
  void aValueThatDoesNotFitItsColumnIsRefused() {
    String name = table("narrow");
    client.createTable(
        TableSpec.of(name, Column.of("id", "BIGINT"), Column.of("small", "SMALLINT")), false);
    Exception e =
        assertThrows(
            Exception.class,
            () -> spark.sql("INSERT INTO fg." + name + " VALUES (1L, 40000)").collect());
    assertTrue(messages(e).contains("CAST_OVERFLOW_IN_TABLE_INSERT"), messages(e));
    assertTrue(messages(e).contains("`small`"), messages(e));
    assertEquals(0, read(name).count());
  }

  /**
   * A log table's rows may leave out nullable columns, as the server takes them (PROTOCOL.md §5): a
   * producer goes on unchanged after a column is added.
   */
  @Test
  void logTableRowsMayLeaveOutNullableColumns() {
    String name = table("sparse");
    client.createTable(
        TableSpec.of(
            name, Column.notNull("id", "BIGINT"), Column.of("s", "STRING"), Column.of("n", "INT")),
        false);
    append(spark.sql("SELECT 1L AS id, 'one' AS s"), name);
    spark.sql("INSERT INTO fg." + name + " (id) VALUES (2)");
    assertEquals(
        List.of(row(1L, "one", null), row(2L, null, null)), rows(read(name).orderBy("id")));
  }

  @Test
  void writeErrorsSayWhatIsWrong() {
    String name = table("strict");
    client.createTable(
        TableSpec.of(name, Column.notNull("id", "BIGINT"), Column.of("s", "STRING")), false);
    Exception unknown =
        assertThrows(
            Exception.class, () -> append(spark.sql("SELECT 1L AS id, 'x' AS nope"), name));
    assertTrue(messages(unknown).contains("[nope] are not in the table"), messages(unknown));
    Exception type =
        assertThrows(Exception.class, () -> append(spark.sql("SELECT '1' AS id, 'x' AS s"), name));
    assertTrue(
        messages(type).contains("column id is BIGINT in the table but STRING in the DataFrame"),
        messages(type));
    Exception notNull =
        assertThrows(Exception.class, () -> append(spark.sql("SELECT 'x' AS s"), name));
    assertTrue(messages(notNull).contains("the DataFrame lacks [id]"), messages(notNull));
    String partitioned = table("strict_parts");
    client.createTable(
        TableSpec.of(partitioned, Column.of("id", "BIGINT"), Column.of("dt", "STRING"))
            .withPartitionKeys("dt"),
        false);
    Exception key =
        assertThrows(Exception.class, () -> append(spark.sql("SELECT 1L AS id"), partitioned));
    assertTrue(messages(key).contains("the DataFrame lacks [dt]"), messages(key));
    assertEquals(0, read(name).count() + read(partitioned).count());
  }
}
