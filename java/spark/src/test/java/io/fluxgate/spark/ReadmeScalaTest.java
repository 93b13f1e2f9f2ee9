package io.fluxgate.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.tools.nsc.Settings;
import scala.tools.nsc.interpreter.IMain;
import scala.tools.nsc.interpreter.Results;
import scala.tools.nsc.interpreter.shell.ReplReporterImpl;

/**
 * Runs the ```scala blocks of docs/spark.md in the Scala interpreter spark-shell runs, one block at
 * a time as {@code :paste} does, with {@code spark} bound to the tests' session (its catalog fg on
 * the tests' server). The README's endpoint becomes the server's and its /tmp/ paths a fresh
 * directory. Then a JSON file dropped into the streaming write's input must come out of the
 * streaming read.
 */
class ReadmeScalaTest extends SparkServerTest {
  static final Path PAGE =
      Path.of(System.getProperty("fluxgate.root", "../..")).resolve("docs/spark.md");

  @Test
  void readmeScalaBlocksRun(@TempDir Path tmp) throws Exception {
    List<Block> blocks = sparkBlocks(Files.readString(PAGE), "scala");
    assertTrue(blocks.size() >= 2, "docs/spark.md's Scala blocks not found");
    StringWriter out = new StringWriter();
    Settings settings = new Settings();
    settings.classpath().value_$eq(System.getProperty("java.class.path"));
    IMain repl = new IMain(settings, new ReplReporterImpl(settings, new PrintWriter(out, true)));
    try {
      scala.collection.immutable.List<String> noModifiers =
          scala.jdk.javaapi.CollectionConverters.asScala(List.<String>of()).toList();
      repl.bind("spark", "org.apache.spark.sql.SparkSession", spark, noModifiers);
      interpret(repl, out, "import spark.implicits._");
      for (Block block : blocks) {
        interpret(
            repl,
            out,
            block
                .source()
                .replace("grpc://127.0.0.1:8815", server.uri())
                .replace("/tmp/", tmp + "/"));
      }
      Files.writeString(tmp.resolve("fluxgate-in/1.json"), "{\"id\": 7, \"s\": \"seven\"}\n");
      interpret(repl, out, "in.processAllAvailable(); out.processAllAvailable()");
      assertEquals(
          List.of(List.of(7L, "seven")),
          rows(spark.read().parquet(tmp.resolve("fluxgate-clicks").toString())));
    } finally {
      for (StreamingQuery q : spark.streams().active()) {
        q.stop();
      }
      repl.close();
    }
  }

  private static void interpret(IMain repl, StringWriter out, String code) {
    Results.Result result = repl.interpret(code);
    assertEquals(Results.Success$.MODULE$, result, code + "\n" + out);
  }

  /** A fenced block of the page: its first line's number (from 1) and its text. */
  record Block(int line, String source) {}

  /** The page's ```LANG blocks, in order. */
  static List<Block> sparkBlocks(String page, String lang) {
    List<Block> blocks = new ArrayList<>();
    Matcher block = Pattern.compile("```" + lang + "\n(.*?)```", Pattern.DOTALL).matcher(page);
    while (block.find()) {
      int line = 1 + (int) page.substring(0, block.start(1)).chars().filter(c -> c == '\n').count();
      blocks.add(new Block(line, block.group(1)));
    }
    return blocks;
  }
}
