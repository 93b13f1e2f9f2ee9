package io.fluxgate.flink.lookup;

import io.fluxgate.client.FluxgateClient;
import io.fluxgate.flink.ServerExtension;
import io.fluxgate.flink.Sql;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.RootAllocator;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.BigIntType;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Lookup throughput from one subtask: a lookup join of datagen keys against a 100K-row table, the
 * dictionary's insert-if-not-exists of new keys, each against the same job without the join as
 * baseline; and the latency of one DoExchange batch of one lookup stream. Not a test (its name
 * keeps it out of verify): run it with -Dtest=LookupBench; the figures go to docs/benchmarks.md.
 */
public class LookupBench {
  static final int DIM_ROWS = 100_000;
  static final long KEYS = Long.getLong("bench.keys", 2_000_000);

  @RegisterExtension static final MiniClusterExtension CLUSTER = ServerExtension.cluster(2);

  @RegisterExtension
  static final ServerExtension SERVER = new ServerExtension("--default-bucket-num", "4");

  @Test
  void lookups() throws Exception {
    try (Sql sql = new Sql(SERVER.uri())) {
      StreamTableEnvironment batch = sql.env(true, 1, Map.of());
      batch.executeSql(
          "CREATE TABLE fluss.bench_dim (id BIGINT, name STRING, PRIMARY KEY (id) NOT ENFORCED)");
      batch.executeSql(
          "CREATE TABLE fluss.bench_dict (k STRING, uid INT, PRIMARY KEY (k) NOT ENFORCED)"
              + " WITH ('auto-increment.fields'='uid')");
      batch.executeSql(keys("dim_keys", DIM_ROWS));
      batch
          .executeSql(
              "INSERT INTO fluss.bench_dim SELECT k, CONCAT('name-', CAST(k AS STRING))"
                  + " FROM default_catalog.default_database.dim_keys")
          .await();

      StreamTableEnvironment env =
          sql.env(
              false,
              1,
              Map.of(
                  "table.exec.async-lookup.buffer-capacity", "4096",
                  "table.exec.async-lookup.output-mode", "ALLOW_UNORDERED"));
      env.executeSql(keys("fact_keys", KEYS));
      env.executeSql(
          "CREATE TEMPORARY TABLE default_catalog.default_database.sunk (k BIGINT, v STRING)"
              + " WITH ('connector'='blackhole')");
      String facts =
          "(SELECT k, k % "
              + DIM_ROWS
              + " + 1 AS id, PROCTIME() AS ptime"
              + " FROM default_catalog.default_database.fact_keys) AS f";
      double baseline =
          seconds(
              env, "INSERT INTO default_catalog.default_database.sunk SELECT k, 'x' FROM " + facts);
      double join =
          seconds(
              env,
              "INSERT INTO default_catalog.default_database.sunk SELECT f.k, d.name FROM "
                  + facts
                  + " LEFT JOIN fluss.bench_dim FOR SYSTEM_TIME AS OF f.ptime AS d"
                  + " ON f.id = d.id");
      double dictionary =
          seconds(
              env,
              "INSERT INTO default_catalog.default_database.sunk SELECT f.k, CAST(d.uid AS STRING)"
                  + " FROM "
                  + facts
                  + " LEFT JOIN fluss.bench_dict"
                  + " /*+ OPTIONS('lookup.insert-if-not-exists'='true') */"
                  + " FOR SYSTEM_TIME AS OF f.ptime AS d ON CONCAT('key-', CAST(f.k AS STRING))"
                  + " = d.k");
      System.out.printf(
          "%n%,d keys, parallelism 1: baseline (no join) %.1f s; lookup join %.1f s = %,.0f keys/s;"
              + " insert-if-not-exists (every key new) %.1f s = %,.0f new keys/s%n",
          KEYS, baseline, join, KEYS / join, dictionary, KEYS / dictionary);
      batchLatency();
    }
  }

  /** A bounded sequence 1..n as the datagen table default_catalog.default_database.name. */
  private static String keys(String name, long n) {
    return "CREATE TEMPORARY TABLE default_catalog.default_database."
        + name
        + " (k BIGINT) WITH ('connector'='datagen', 'fields.k.kind'='sequence',"
        + " 'fields.k.start'='1', 'fields.k.end'='"
        + n
        + "', 'number-of-rows'='"
        + n
        + "', 'rows-per-second'='1000000000')";
  }

  private static double seconds(StreamTableEnvironment env, String insert) throws Exception {
    long start = System.nanoTime();
    env.executeSql(insert).await();
    return (System.nanoTime() - start) / 1e9;
  }

  /**
   * p50/p99 of one batch of one lookup stream (the code each async stream runs): lookups of present
   * keys, and insert-if-not-exists of keys never seen.
   */
  private static void batchLatency() {
    RowType dim =
        RowType.of(
            new LogicalType[] {new BigIntType(false), new VarCharType(VarCharType.MAX_LENGTH)},
            new String[] {"id", "name"});
    RowType dict =
        RowType.of(
            new LogicalType[] {new VarCharType(false, VarCharType.MAX_LENGTH), new IntType()},
            new String[] {"k", "uid"});
    int[] none = new int[0];
    LookupSpec lookup =
        new LookupSpec(
            "fluss.bench_dim", dim, List.of("id"), new int[] {0}, none, none, false, false, 0);
    LookupSpec insert =
        new LookupSpec(
            "fluss.bench_dict", dict, List.of("k"), new int[] {0}, none, none, false, true, 0);
    long[] next = {0};
    for (int size : new int[] {256, 1024, 4096}) {
      measure("lookups", lookup, size, i -> GenericRowData.of((long) (i * 37 % DIM_ROWS + 1)));
    }
    for (int size : new int[] {256, 1024, 4096}) {
      measure(
          "insert-if-not-exists of new keys",
          insert,
          size,
          i -> GenericRowData.of(StringData.fromString("new-" + next[0]++)));
    }
  }

  private static void measure(
      String what, LookupSpec spec, int size, java.util.function.IntFunction<RowData> key) {
    try (RootAllocator allocator = new RootAllocator();
        FluxgateClient client = FluxgateClient.connect(SERVER.uri());
        LookupSession session = new LookupSession(client, allocator, spec)) {
      int rounds = Math.max(100, 200_000 / size);
      long[] nanos = new long[rounds];
      for (int r = -10; r < rounds; r++) { // 10 rounds of warm-up
        List<RowData> keys = new ArrayList<>(size);
        for (int i = 0; i < size; i++) {
          keys.add(key.apply(i));
        }
        long start = System.nanoTime();
        session.lookup(keys);
        if (r >= 0) {
          nanos[r] = System.nanoTime() - start;
        }
      }
      Arrays.sort(nanos);
      long total = Arrays.stream(nanos).sum();
      System.out.printf(
          "one stream, %s, batches of %,d keys: p50 %.2f ms, p99 %.2f ms, %,.0f keys/s%n",
          what,
          size,
          nanos[rounds / 2] / 1e6,
          nanos[rounds * 99 / 100] / 1e6,
          (double) size * rounds / (total / 1e9));
    }
  }
}
