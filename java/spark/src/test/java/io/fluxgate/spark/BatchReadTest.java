package io.fluxgate.spark;

import static io.fluxgate.client.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.Column;
import io.fluxgate.client.TableSpec;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;

class BatchReadTest extends SparkServerTest {
  /** A log table of 3 buckets with rows (i, "cat" + i % 3, i * 1.5), i in 0..29, in two writes. */
  private static String logTable() {
    String name = table("events");
    client.createTable(
        TableSpec.of(
                name,
                Column.of("id", "BIGINT"),
                Column.of("cat", "STRING"),
                Column.of("v", "DOUBLE"))
            .withOptions(Map.of("bucket.num", "3")),
        false);
    for (int part = 0; part < 2; part++) {
      List<List<Object>> rows = new ArrayList<>();
      for (long i = part * 15; i < part * 15 + 15; i++) {
        rows.add(row(i, "cat" + i % 3, i * 1.5));
      }
      write(name, rows);
    }
    return name;
  }

  @Test
  void logTableReadsEveryRowOnePartitionPerBucket() {
    String name = logTable();
    Dataset<Row> df = read(name);
    assertEquals(3, df.rdd().getNumPartitions());
    List<List<Object>> want = new ArrayList<>();
    for (long i = 0; i < 30; i++) {
      want.add(row(i, "cat" + i % 3, i * 1.5));
    }
    assertEquals(want, rows(df.orderBy("id")));
  }
}
