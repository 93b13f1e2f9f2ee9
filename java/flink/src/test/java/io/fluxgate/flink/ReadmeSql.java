package io.fluxgate.flink;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.TableResult;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;

/**
 * Runs the Flink SQL of README.md's "### Flink" section the way the SQL client would, but in a
 * plain JVM with only Flink's lib/ on the classpath and the connector loaded by ADD JAR: the
 * manual check of java/README.md ("The shaded jar in Flink's classloader"). Not a JUnit test.
 *
 * <p>Usage: {@code ReadmeSql README.md <shaded jar> <endpoint>}. The README's endpoint is replaced
 * by the given one. A SQL-client {@code SET 'execution.runtime-mode' = 'streaming'} makes every
 * later query and INSERT run twice: EXPLAINed by a streaming environment (a streaming job would
 * not end) and then run by the batch one. Other SETs go to both.
 */
public final class ReadmeSql {
  /** Statements that change the session rather than the catalog. */
  private static final Pattern SESSION =
      Pattern.compile("(?is)(ADD JAR|CREATE CATALOG|USE|CREATE TEMPORARY)\\b.*");

  private static final Pattern SET = Pattern.compile("SET\\s+'([^']+)'\\s*=\\s*'([^']*)'");

  public static void main(String[] args) throws Exception {
    String readme = Files.readString(Path.of(args[0]));
    List<String> statements = new ArrayList<>();
    statements.add("ADD JAR '" + args[1] + "'");
    for (String stmt : flinkSql(readme).replaceAll("(?m)--.*$", "").split(";\\s*\n")) {
      String s = stmt.trim();
      if (!s.isEmpty()) {
        statements.add(s.replace("grpc://127.0.0.1:8815", args[2]));
      }
    }
    TableEnvironment batch =
        TableEnvironment.create(EnvironmentSettings.newInstance().inBatchMode().build());
    TableEnvironment streaming = null;
    List<String> session = new ArrayList<>(); // what a streaming environment replays
    for (String s : statements) {
      System.out.println("> " + s.replace('\n', ' '));
      Matcher set = SET.matcher(s);
      if (set.matches()) {
        if (set.group(1).equals("execution.runtime-mode")) {
          streaming = set.group(2).equals("streaming") ? streamingEnv(session) : null;
        } else {
          batch.getConfig().set(set.group(1), set.group(2));
          if (streaming != null) {
            streaming.getConfig().set(set.group(1), set.group(2));
          }
        }
        continue;
      }
      boolean query = s.matches("(?is)(SELECT|INSERT|EXPLAIN)\\b.*");
      if (streaming != null && query) {
        String plan = streaming.explainSql(s.replaceFirst("(?is)^EXPLAIN\\s+", ""));
        String optimized = plan.substring(plan.indexOf("== Optimized Execution Plan =="));
        System.out.println("  streaming plan: " + optimized.lines().skip(1).toList());
      }
      if (SESSION.matcher(s).matches()) { // catalog objects are the server's: both see them
        session.add(s);
        if (streaming != null) {
          streaming.executeSql(s);
        }
      }
      print(batch.executeSql(s), s.matches("(?is)(SELECT|EXPLAIN)\\b.*"));
    }
    System.exit(0); // the catalogs' connections would keep the JVM up
  }

  private static TableEnvironment streamingEnv(List<String> session) {
    TableEnvironment env =
        TableEnvironment.create(EnvironmentSettings.newInstance().inStreamingMode().build());
    session.forEach(env::executeSql);
    return env;
  }

  private static void print(TableResult result, boolean rows) throws Exception {
    if (!rows) {
      result.await();
      System.out.println("  ok");
      return;
    }
    try (CloseableIterator<Row> it = result.collect()) {
      while (it.hasNext()) {
        System.out.println("  " + it.next());
      }
    }
  }

  /** The ```sql blocks between "### Flink" and the next "## " heading. */
  private static String flinkSql(String readme) {
    int from = readme.indexOf("\n### Flink\n");
    int to = readme.indexOf("\n## ", from);
    StringBuilder sql = new StringBuilder();
    Matcher block = Pattern.compile("```sql\n(.*?)```", Pattern.DOTALL).matcher(readme);
    block.region(from, to);
    while (block.find()) {
      sql.append(block.group(1));
    }
    return sql.toString();
  }
}
