package io.fluxgate.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.FluxgateServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the Flink SQL of docs/flink.md through Flink's own SQL client (scripts/flink-sql, with the
 * shaded jar as a session jar, as ADD JAR loads it) against a fresh server: an integration test,
 * run by {@code mvn verify} after the jar is packaged.
 *
 * <p>The README's endpoint becomes the server's. After {@code SET 'execution.runtime-mode' =
 * 'streaming'}, each query and INSERT is EXPLAINed in streaming mode (a streaming job would not
 * end; the plan shows the delta join's DeltaJoin) and then run in batch mode. INSERTs wait for
 * their job (table.dml-sync), so that later statements see their rows.
 */
@Timeout(600)
public class ReadmeSqlIT {
  private static final Path ROOT = Path.of(System.getProperty("fluxgate.root"));
  private static final String README_ENDPOINT = "grpc://127.0.0.1:8815";
  private static final Pattern RUNTIME_MODE =
      Pattern.compile("(?is)SET\\s+'execution\\.runtime-mode'\\s*=\\s*'(\\w+)'");

  @Test
  void readmeFlinkSqlRunsInFlinksSqlClient(@TempDir Path dir) throws Exception {
    List<String> documented = flinkStatements(Files.readString(ROOT.resolve("docs/flink.md")));
    assertTrue(documented.size() >= 20, "docs/flink.md's Flink SQL not found: " + documented);
    try (FluxgateServer server =
        FluxgateServer.start(Files.createDirectories(dir.resolve("data")))) {
      List<String> run = forTheClient(documented, server.uri());
      Path sql = dir.resolve("readme.sql");
      Files.writeString(sql, String.join(";\n", run) + ";\n");
      ProcessBuilder flinkSql =
          new ProcessBuilder(ROOT.resolve("scripts/flink-sql").toString(), "-f", sql.toString())
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve("out.txt").toFile());
      flinkSql.environment().put("FLINK_SQL_DIR", dir.resolve("client").toString());
      Process client = flinkSql.start();
      assertTrue(client.waitFor(540, TimeUnit.SECONDS), "the SQL client did not end");
      String out = Files.readString(dir.resolve("out.txt"));
      assertEquals(0, client.exitValue(), out);
      assertTrue(out.contains(run.size() + " statements of "), out);
      // The README's results: the shops' sums, and the delta join's plan.
      assertTrue(out.matches("(?s).*\\|\\s+s1 \\|\\s+30 \\|.*"), out);
      assertTrue(out.contains("DeltaJoin"), out);
      Matcher log = Pattern.compile("the client's log: ([^\\s)]+)").matcher(out);
      assertTrue(log.find(), out);
      String clientLog = Files.readString(Path.of(log.group(1)));
      // The session jar's classloader closes with the session: no thread of the connector
      // (Netty, gRPC) may outlive it and fail on a class it can no longer load.
      assertFalse(out.contains("NoClassDefFoundError"), out);
      assertFalse(
          clientLog
              .lines()
              .anyMatch(l -> l.contains("NoClassDefFoundError") && l.contains("fluxgate")),
          clientLog);
    }
  }

  /** The statements of the page's ```sql blocks, in order. */
  static List<String> flinkStatements(String page) {
    StringBuilder sql = new StringBuilder();
    Matcher block = Pattern.compile("```sql\n(.*?)```", Pattern.DOTALL).matcher(page);
    while (block.find()) {
      sql.append(block.group(1));
    }
    List<String> statements = new ArrayList<>();
    for (String s : sql.toString().replaceAll("(?m)--.*$", "").split(";\\s*\n")) {
      if (!s.isBlank()) {
        statements.add(s.trim());
      }
    }
    return statements;
  }

  /** The statements as the client runs them here: see the class comment. */
  static List<String> forTheClient(List<String> documented, String endpoint) {
    List<String> run = new ArrayList<>();
    run.add("SET 'table.dml-sync' = 'true'");
    boolean streaming = false;
    for (String s : documented) {
      String stmt = s.replace(README_ENDPOINT, endpoint);
      Matcher mode = RUNTIME_MODE.matcher(stmt);
      if (mode.matches()) {
        streaming = mode.group(1).equalsIgnoreCase("streaming");
      }
      if (streaming && stmt.matches("(?is)(SELECT|INSERT)\\b.*")) {
        run.add("EXPLAIN " + stmt);
        run.add("SET 'execution.runtime-mode' = 'batch'");
        run.add(stmt);
        run.add("SET 'execution.runtime-mode' = 'streaming'");
      } else {
        run.add(stmt);
      }
    }
    return run;
  }
}
