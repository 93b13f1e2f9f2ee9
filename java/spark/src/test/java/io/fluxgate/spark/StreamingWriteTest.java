package io.fluxgate.spark;

import static io.fluxgate.client.Rows.row;
import static org.apache.spark.sql.functions.callUDF;
import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.Column;
import io.fluxgate.client.TableSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.StreamingQueryException;
import org.apache.spark.sql.streaming.StreamingQueryProgress;
import org.apache.spark.sql.streaming.Trigger;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code df.writeStream.format("fluxgate")}: each micro-batch is written exactly once, across a
 * failed epoch, a restart from the checkpoint and the replay of a committed epoch. The input is a
 * file source over JSON files the test writes, one file per micro-batch, which Spark replays from
 * its checkpoint.
 */
class StreamingWriteTest extends SparkServerTest {
  private static final StructType INPUT =
      new StructType().add("id", DataTypes.LongType).add("s", DataTypes.StringType);

  @TempDir Path dir;

  private static String logTable() {
    String name = table("sink");
    client.createTable(
        TableSpec.of(name, Column.of("id", "BIGINT"), Column.of("s", "STRING"))
            .withOptions(Map.of("bucket.num", "2")),
        false);
    return name;
  }

  /** Writes ids [from, to) as the JSON file n of the input, whole (a rename). */
  private void inputFile(int n, long from, long to) throws IOException {
    Path in = Files.createDirectories(dir.resolve("in"));
    List<String> lines = new ArrayList<>();
    for (long i = from; i < to; i++) {
      lines.add("{\"id\": " + i + ", \"s\": \"s" + i + "\"}");
    }
    Path tmp = Files.write(dir.resolve(n + ".tmp"), lines);
    Files.move(tmp, in.resolve(String.format("%03d.json", n)), StandardCopyOption.ATOMIC_MOVE);
  }

  /** Runs the input into table, a file per micro-batch, until every file is written. */
  private StreamingQuery start(String table, Dataset<Row> input, int batchRows) {
    try {
      return input
          .writeStream()
          .format("fluxgate")
          .option("endpoint", server.uri())
          .option("table", table)
          .option(FluxgateWrite.BATCH_ROWS, batchRows)
          .option("checkpointLocation", dir.resolve("checkpoint").toString())
          .trigger(Trigger.AvailableNow())
          .start();
    } catch (java.util.concurrent.TimeoutException e) {
      throw new IllegalStateException(e);
    }
  }

  private Dataset<Row> input() {
    return spark
        .readStream()
        .schema(INPUT)
        .option("maxFilesPerTrigger", 1)
        .json(dir.resolve("in").toString());
  }

  private static List<Long> ids(String table) {
    return read(table).select("id").orderBy("id").as(Encoders.LONG()).collectAsList();
  }

  private static List<Long> range(long from, long to) {
    List<Long> out = new ArrayList<>();
    for (long i = from; i < to; i++) {
      out.add(i);
    }
    return out;
  }

  @Test
  void failedEpochResumesAfterItsAppliedBatches() throws Exception {
    String name = logTable();
    inputFile(0, 0, 100);
    inputFile(1, 100, 200);
    inputFile(2, 200, 300);
    Dataset<Row> input = input().select(callUDF("fail_at", col("id")).as("id"), col("s"));

    // One row per batch: the third epoch's task fails (both tries) after 50 batches, more than the
    // 32 the server remembers, so only skipping them keeps its replay from writing them twice.
    failAt(250, 2);
    StreamingQuery failed = start(name, input, 1);
    assertThrows(StreamingQueryException.class, failed::awaitTermination);
    // Files of one modification time may be taken in any order: the failed epoch is file 2's.
    long applied = ids(name).stream().filter(id -> id >= 200).count();
    assertTrue(applied > 32, "the failed epoch applied " + applied + " batches, want > 32");

    StreamingQuery restarted = start(name, input, 1);
    restarted.awaitTermination();
    assertEquals(range(0, 300), ids(name), "every input row once across the failure and restart");
  }

  @Test
  void replayedEpochWritesNothingTwice() throws Exception {
    String name = logTable();
    inputFile(0, 0, 100);
    inputFile(1, 100, 200);
    StreamingQuery q = start(name, input(), 7);
    q.awaitTermination();
    assertEquals(range(0, 200), ids(name));

    // Forget that epoch 1 committed: the restart runs it again, with the same input.
    Path commits = dir.resolve("checkpoint").resolve("commits");
    Files.delete(commits.resolve("1"));
    Files.deleteIfExists(commits.resolve(".1.crc"));
    inputFile(2, 200, 300);
    StreamingQuery replay = start(name, input(), 7);
    replay.awaitTermination();
    List<Long> batches =
        Arrays.stream(replay.recentProgress()).map(StreamingQueryProgress::batchId).toList();
    assertTrue(batches.contains(1L), "epoch 1 was not run again: " + batches);
    assertEquals(range(0, 300), ids(name), "the replayed epoch wrote nothing twice");
  }

  @Test
  void primaryKeyTableTakesPartialUpdates() throws Exception {
    String name = table("sink_pk");
    client.createTable(
        TableSpec.of(
                name, Column.of("id", "BIGINT"), Column.of("s", "STRING"), Column.of("n", "INT"))
            .withPrimaryKey("id"),
        false);
    write(name, List.of(row(1L, "old", 10), row(2L, "old", 20)));
    inputFile(0, 1, 4);
    StreamingQuery q = start(name, input(), 2);
    q.awaitTermination();
    assertEquals(
        List.of(List.of(1L, "s1", 10), List.of(2L, "s2", 20), Arrays.asList(3L, "s3", null)),
        rows(read(name).orderBy("id")),
        "upserts of id and s keep n");
  }
}
