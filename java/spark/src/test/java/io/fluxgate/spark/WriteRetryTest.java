package io.fluxgate.spark;

import static org.apache.spark.sql.functions.callUDF;
import static org.apache.spark.sql.functions.col;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fluxgate.client.Column;
import io.fluxgate.client.TableSpec;
import java.util.List;
import java.util.stream.LongStream;
import org.apache.spark.sql.Encoders;
import org.junit.jupiter.api.Test;

/**
 * A batch {@code df.write} whose task fails once, after more batches were applied than the 32 the
 * server remembers of a writer, and is tried again (the session is local[2,2]).
 */
class WriteRetryTest extends SparkServerTest {
  @Test
  void retriedTaskSkipsItsAppliedBatches() {
    String name = table("retry");
    client.createTable(TableSpec.of(name, Column.of("id", "BIGINT")), false);

    // Two tasks of 100 ids, one row per batch: the second fails at id 190, after 90 batches sent
    // (at most 4 of them unacknowledged), so its retry has to skip them rather than resend them.
    failAt(190, 1);
    spark
        .range(0, 200, 1, 2)
        .select(callUDF("fail_at", col("id")).as("id"))
        .write()
        .format("fluxgate")
        .option("endpoint", server.uri())
        .option("table", name)
        .option(FluxgateWrite.BATCH_ROWS, 1)
        .mode("append")
        .save();
    assertEquals(0, failuresLeft(), "the task failed once");

    List<Long> ids = read(name).select("id").orderBy("id").as(Encoders.LONG()).collectAsList();
    assertEquals(LongStream.range(0, 200).boxed().toList(), ids, "every row once");
  }
}
