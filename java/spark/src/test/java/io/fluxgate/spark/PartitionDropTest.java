package io.fluxgate.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.fluxgate.client.FluxgateException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream;
import org.apache.spark.sql.connector.read.streaming.Offset;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.junit.jupiter.api.Test;

/**
 * Reads of a partitioned table across a dropped partition, as Fluss's: the partition is gone (no
 * more rows of it), the read goes on with the others, and a partition created again under its name
 * is a new one. The drops between listing and reading are made deterministic by driving the scan
 * and the stream as Spark does, one call at a time.
 */
class PartitionDropTest extends SparkServerTest {

  /** A day-partitioned log table (id, dt) of one bucket, so that offsets are row counts. */
  private static String dayTable() {
    String name = table("dropping");
    spark.sql(
        "CREATE TABLE fg."
            + name
            + " (id BIGINT, dt STRING) PARTITIONED BY (dt) TBLPROPERTIES ('bucket.num' = '1')");
    return name;
  }

  private static void insert(String table, String day, long... ids) {
    List<List<Object>> rows = new ArrayList<>();
    for (long id : ids) {
      rows.add(List.of(id, day));
    }
    write(table, rows);
  }

  private static void drop(String table, String day) {
    client.dropPartition(table, Map.of("dt", day), false);
  }

  private static Scan scan(String table) throws Exception {
    TableCatalog catalog = (TableCatalog) spark.sessionState().catalogManager().catalog("fg");
    String[] parts = table.split("\\.");
    return ((SupportsRead) catalog.loadTable(Identifier.of(new String[] {parts[0]}, parts[1])))
        .newScanBuilder(CaseInsensitiveStringMap.empty())
        .build();
  }

  /** Reads input partitions as an executor does: "id@dt" of every row, sorted. */
  private static List<String> read(PartitionReaderFactory factory, InputPartition[] partitions)
      throws IOException {
    List<String> rows = new ArrayList<>();
    for (InputPartition p : partitions) {
      try (PartitionReader<ColumnarBatch> reader = factory.createColumnarReader(p)) {
        while (reader.next()) {
          for (var it = reader.get().rowIterator(); it.hasNext(); ) {
            InternalRow r = it.next();
            rows.add(r.getLong(0) + "@" + r.getUTF8String(1));
          }
        }
      }
    }
    rows.sort(null);
    return rows;
  }

  @Test
  void aBatchReadPlannedBeforeADropReadsTheOtherPartitionsAndNoneOfTheDroppedOne()
      throws Exception {
    String name = dayTable();
    insert(name, "20261201", 1, 2);
    insert(name, "20261202", 3, 4);
    Scan scan = scan(name);
    InputPartition[] planned = scan.toBatch().planInputPartitions();
    drop(name, "20261201");
    assertEquals(
        List.of("3@20261202", "4@20261202"), read(scan.toBatch().createReaderFactory(), planned));

    // Another NOT_FOUND, of the whole table dropped, fails the read.
    client.dropTable(name, false);
    assertThrows(
        FluxgateException.NotFound.class,
        () -> read(scan.toBatch().createReaderFactory(), planned));
  }

  @Test
  void aPartitionDroppedAfterTheBatchWasListedIsLeftOutOfItAndACreatedAgainOneIsNew()
      throws Exception {
    String name = dayTable();
    insert(name, "20261201", 1, 2, 3);
    insert(name, "20261202", 4, 5, 6);
    insert(name, "20261203", 7);
    MicroBatchStream stream =
        scan(name).toMicroBatchStream(Files.createTempDirectory("drop-stream").toString());
    Offset start = stream.initialOffset();
    Offset end = stream.latestOffset();
    drop(name, "20261202"); // listed in end, dropped before the batch is planned
    List<String> first = List.of("1@20261201", "2@20261201", "3@20261201", "7@20261203");
    assertEquals(first, read(stream.createReaderFactory(), stream.planInputPartitions(start, end)));

    // A restart plans the batch again from the checkpoint's offsets: the same rows.
    MicroBatchStream restarted =
        scan(name).toMicroBatchStream(Files.createTempDirectory("drop-stream").toString());
    Offset startAgain = restarted.deserializeOffset(start.json());
    Offset endAgain = restarted.deserializeOffset(end.json());
    assertEquals(
        first,
        read(restarted.createReaderFactory(), restarted.planInputPartitions(startAgain, endAgain)));

    // The next batch: the dropped partition has left the offsets. 20261202 created again holds
    // one row, below the three the old one had: a new partition, read from its start.
    insert(name, "20261202", 8);
    insert(name, "20261203", 9);
    Offset next = stream.latestOffset();
    assertEquals(
        List.of("8@20261202", "9@20261203"),
        read(stream.createReaderFactory(), stream.planInputPartitions(end, next)));

    // Dropped and created again after listing: the batch leaves it out (its rows are of
    // another partition, read from the start in the next batch).
    insert(name, "20261201", 10);
    Offset last = stream.latestOffset();
    drop(name, "20261201");
    insert(name, "20261201", 11, 12);
    assertEquals(
        List.of(), read(stream.createReaderFactory(), stream.planInputPartitions(next, last)));
    assertEquals(
        List.of("11@20261201", "12@20261201"),
        read(
            stream.createReaderFactory(), stream.planInputPartitions(last, stream.latestOffset())));
  }

  @Test
  void aRunningStreamReadsTheOtherPartitionsExactlyOnceAcrossADropAndARestart() throws Exception {
    String name = dayTable();
    insert(name, "20261201", 1, 2);
    insert(name, "20261202", 3);
    Path out = Files.createTempDirectory("drop-out");
    Path checkpoint = Files.createTempDirectory("drop-checkpoint");
    StreamingQuery q = follow(name, out, checkpoint);
    try {
      q.processAllAvailable();
      assertEquals(List.of("1@20261201", "2@20261201", "3@20261202"), rows(out));

      drop(name, "20261201");
      insert(name, "20261202", 4);
      q.processAllAvailable();
      assertEquals(List.of("1@20261201", "2@20261201", "3@20261202", "4@20261202"), rows(out));
    } finally {
      q.stop();
    }

    insert(name, "20261202", 5);
    insert(name, "20261201", 6); // created again: a new partition
    StreamingQuery again = follow(name, out, checkpoint);
    try {
      again.processAllAvailable();
    } finally {
      again.stop();
    }
    assertEquals(
        List.of("1@20261201", "2@20261201", "3@20261202", "4@20261202", "5@20261202", "6@20261201"),
        rows(out));
  }

  /** The stream's output as "id@dt", sorted by id. */
  private static List<String> rows(Path out) {
    List<String> rows = new ArrayList<>();
    spark
        .read()
        .parquet(out.toString())
        .orderBy("id")
        .collectAsList()
        .forEach(r -> rows.add(r.getLong(0) + "@" + r.getString(1)));
    return rows;
  }
}
