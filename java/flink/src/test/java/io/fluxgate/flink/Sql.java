package io.fluxgate.flink;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.function.Executable;

/** Table environments on the test's MiniCluster with the catalog fg, and reading their results. */
public final class Sql implements AutoCloseable {
  private final List<StreamTableEnvironment> envs = new ArrayList<>();
  private final String uri;

  public Sql(String uri) {
    this.uri = uri;
  }

  /** A table environment, batch or streaming, with fg as the current catalog. */
  public StreamTableEnvironment env(boolean batch, int parallelism, Map<String, String> config) {
    Configuration conf = new Configuration();
    conf.set(
        ExecutionOptions.RUNTIME_MODE,
        batch ? RuntimeExecutionMode.BATCH : RuntimeExecutionMode.STREAMING);
    config.forEach(conf::setString);
    StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
    env.setParallelism(parallelism);
    StreamTableEnvironment t = StreamTableEnvironment.create(env);
    t.executeSql("CREATE CATALOG fg WITH ('type'='fluxgate', 'endpoint'='" + uri + "')");
    t.executeSql("USE CATALOG fg");
    envs.add(t);
    return t;
  }

  public StreamTableEnvironment env(boolean batch) {
    return env(batch, 2, Map.of());
  }

  /** The rows of a query, as Row.toString, sorted. */
  public static List<String> rows(StreamTableEnvironment env, String sql) throws Exception {
    List<String> out = new ArrayList<>();
    try (CloseableIterator<Row> it = env.executeSql(sql).collect()) {
      it.forEachRemaining(r -> out.add(r.toString()));
    }
    out.sort(null);
    return out;
  }

  /** The messages of the ValidationExceptions in what action throws (Flink wraps them). */
  public static String validationMessage(Executable action) {
    Throwable thrown = Assertions.assertThrows(Throwable.class, action);
    StringBuilder messages = new StringBuilder();
    for (Throwable c = thrown; c != null; c = c.getCause()) {
      if (c instanceof ValidationException) {
        messages.append(c.getMessage()).append('\n');
      }
    }
    if (messages.isEmpty()) {
      throw new AssertionError("no ValidationException in " + thrown, thrown);
    }
    return messages.toString();
  }

  /** Every message in the cause chain of what action throws. */
  static String failure(Executable action) {
    Throwable thrown = Assertions.assertThrows(Throwable.class, action);
    StringBuilder messages = new StringBuilder();
    for (Throwable c = thrown; c != null; c = c.getCause()) {
      messages.append(c).append('\n');
    }
    return messages.toString();
  }

  @Override
  public void close() throws Exception {
    for (StreamTableEnvironment e : envs) {
      e.getCatalog("fg").orElseThrow().close();
    }
    envs.clear();
  }
}
