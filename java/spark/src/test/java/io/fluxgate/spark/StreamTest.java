package io.fluxgate.spark;

import static io.fluxgate.client.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.Column;
import io.fluxgate.client.ScanRequest;
import io.fluxgate.client.TableSpec;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.Trigger;
import org.junit.jupiter.api.Test;

class StreamTest extends SparkServerTest {
  private static String logTable() {
    String name = table("stream");
    client.createTable(
        TableSpec.of(name, Column.of("id", "BIGINT"), Column.of("s", "STRING"))
            .withOptions(Map.of("bucket.num", "2")),
        false);
    return name;
  }

  private static void writeIds(String table, long from, long to) {
    List<List<Object>> rows = new ArrayList<>();
    for (long i = from; i < to; i++) {
      rows.add(row(i, "s" + i));
    }
    write(table, rows);
  }

  /** Runs the stream into parquet files under out with this checkpoint until it is caught up. */
  private static void drain(Dataset<Row> stream, Path out, Path checkpoint) throws Exception {
    StreamingQuery q =
        stream
            .writeStream()
            .format("parquet")
            .option("path", out.toString())
            .option("checkpointLocation", checkpoint.toString())
            .trigger(Trigger.AvailableNow())
            .start();
    q.awaitTermination();
  }

  private static List<Long> ids(Path out) {
    return spark
        .read()
        .parquet(out.toString())
        .orderBy("id")
        .select("id")
        .as(org.apache.spark.sql.Encoders.LONG())
        .collectAsList();
  }

  private static List<Long> range(long from, long to) {
    List<Long> out = new ArrayList<>();
    for (long i = from; i < to; i++) {
      out.add(i);
    }
    return out;
  }

  /** Two writers append ids [from, from + 100) in batches of 10, one the even tens, one the odd. */
  private static CompletableFuture<Void> writers(String table, long from) {
    CompletableFuture<?>[] each = new CompletableFuture<?>[2];
    for (int w = 0; w < 2; w++) {
      long first = from + w * 10;
      each[w] =
          CompletableFuture.runAsync(
              () -> {
                for (long i = first; i < from + 100; i += 20) {
                  writeIds(table, i, i + 10);
                }
              });
    }
    return CompletableFuture.allOf(each);
  }

  @Test
  void restartFromCheckpointSeesEveryRowOnceWithConcurrentWriters() throws Exception {
    String name = logTable();
    Path out = Files.createTempDirectory("fluxgate-stream-out");
    Path checkpoint = Files.createTempDirectory("fluxgate-stream-checkpoint");
    writeIds(name, 0, 20);

    // The first run follows the table while two writers append, and is stopped mid-way.
    CompletableFuture<Void> first = writers(name, 20);
    StreamingQuery q = follow(name, out, checkpoint);
    long deadline = System.currentTimeMillis() + 60_000;
    while (q.recentProgress().length == 0 || q.lastProgress().numInputRows() == 0) {
      assertTrue(System.currentTimeMillis() < deadline, "the stream made no progress");
      q.awaitTermination(50); // bounded wait for the query, then check its progress again
    }
    q.stop();

    // The restart resumes from the checkpoint while the writers go on, and more start.
    CompletableFuture<Void> second = writers(name, 120);
    StreamingQuery restarted = follow(name, out, checkpoint);
    first.get();
    second.get();
    restarted.processAllAvailable();
    restarted.stop();
    assertEquals(range(0, 220), ids(out), "every row once across the restart");

    writeIds(name, 220, 230);
    drain(stream(name, Map.of()), out, checkpoint);
    assertEquals(range(0, 230), ids(out), "a second restart reads only what is new, once");
  }

  @Test
  void startupLatestAndTimestamp() throws Exception {
    String name = logTable();
    writeIds(name, 0, 10);
    long after =
        client.listOffsets(name, io.fluxgate.client.Position.LATEST, null).values().stream()
            .mapToLong(Long::longValue)
            .sum();
    assertEquals(10, after);

    Path latestOut = Files.createTempDirectory("fluxgate-latest-out");
    Path latestCheckpoint = Files.createTempDirectory("fluxgate-latest-checkpoint");
    drain(stream(name, Map.of("startup", "latest")), latestOut, latestCheckpoint);
    writeIds(name, 10, 15);
    drain(stream(name, Map.of("startup", "latest")), latestOut, latestCheckpoint);
    assertEquals(range(10, 15), ids(latestOut), "latest skips the rows before the start");

    // A timestamp after every commit so far, and a clock that moved past it before the next write.
    long lastCommit = 0;
    for (List<Object> r :
        io.fluxgate.client.Rows.read(
            client, ScanRequest.of(name + "$changelog").withColumns("id", "_commit_timestamp"))) {
      lastCommit = Math.max(lastCommit, (Long) r.get(1)); // TIMESTAMP_LTZ(3): epoch ms
    }
    long startAt = lastCommit + 1;
    long deadline = System.currentTimeMillis() + 5_000;
    while (System.currentTimeMillis() <= startAt) {
      assertTrue(System.currentTimeMillis() < deadline, "the clock did not move");
      Thread.onSpinWait();
    }
    writeIds(name, 15, 20);
    Path tsOut = Files.createTempDirectory("fluxgate-ts-out");
    Path tsCheckpoint = Files.createTempDirectory("fluxgate-ts-checkpoint");
    drain(
        stream(name, Map.of("startup", "timestamp", "startup.timestamp", Long.toString(startAt))),
        tsOut,
        tsCheckpoint);
    assertEquals(range(15, 20), ids(tsOut));
  }
}
