package io.fluxgate.spark;

import static io.fluxgate.client.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fluxgate.spark.ReadmeScalaTest.Block;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.spark.sql.connect.service.SparkConnectService;
import org.apache.spark.sql.connect.service.SparkConnectService$;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import scala.Option;

/**
 * Runs the ```python-pyspark blocks of docs/spark.md in a Python with pyspark-client (the venv the
 * Makefile makes, python/.venv), one namespace for all, against a Spark Connect server in the
 * tests' Spark (the connector on its classpath, the tests' catalog fg). The docs' endpoint becomes
 * the tests' server and their /tmp/ paths a fresh directory. Then what the blocks wrote is read
 * back here, and a JSON file dropped into the streaming write's input must come out of the
 * streaming read.
 */
class ReadmePysparkTest extends SparkServerTest {
  private static final Path ROOT = Path.of(System.getProperty("fluxgate.root", "../.."));
  private static final Path PYTHON = ROOT.resolve("python/.venv/bin/python");

  @Test
  void readmePysparkBlocksRun(@TempDir Path tmp) throws Exception {
    List<Block> blocks =
        ReadmeScalaTest.sparkBlocks(Files.readString(ReadmeScalaTest.PAGE), "python-pyspark");
    assertTrue(blocks.size() >= 2, "docs/spark.md's pyspark blocks not found");
    assertTrue(
        Files.isExecutable(PYTHON),
        PYTHON + " not found: make venv makes it, with pyspark-client (python/requirements.txt)");
    List<Map<String, Object>> program = new ArrayList<>();
    for (Block b : blocks) {
      String source =
          b.source().replace("grpc://127.0.0.1:8815", server.uri()).replace("/tmp/", tmp + "/");
      program.add(Map.of("file", "docs/spark.md", "line", b.line(), "source", source));
    }
    String drop =
        "open('"
            + tmp.resolve("fluxgate-py-in/1.json")
            + "', 'w').write('{\"id\": 7, \"s\": \"seven\"}\\n')\n"
            + "ingest.processAllAvailable()\n"
            + "follow.processAllAvailable()\n";
    program.add(Map.of("file", "ReadmePysparkTest", "line", 1, "source", drop));
    Path programFile = tmp.resolve("blocks.json");
    new ObjectMapper().writeValue(programFile.toFile(), program);
    Path driver = tmp.resolve("run_blocks.py");
    try (InputStream in = getClass().getResourceAsStream("run_blocks.py")) {
      Files.copy(in, driver);
    }

    SparkConnectService.start(spark.sparkContext());
    try {
      Path log = tmp.resolve("python.log");
      Process python =
          new ProcessBuilder(
                  PYTHON.toString(),
                  driver.toString(),
                  "sc://127.0.0.1:" + SparkConnectService$.MODULE$.localPort(),
                  programFile.toString())
              .redirectErrorStream(true)
              .redirectOutput(log.toFile())
              .start();
      boolean exited = python.waitFor(5, TimeUnit.MINUTES);
      if (!exited) {
        python.destroyForcibly().waitFor();
      }
      assertTrue(exited && python.exitValue() == 0, Files.readString(log));
    } finally {
      SparkConnectService.stop(Option.empty(), Option.empty());
    }

    assertEquals(
        List.of(row(1L, 100.0, "a"), row(2L, 300.0, "b"), row(3L, 500.0, "c")),
        rows(read("fluss.pyspark_orders").orderBy("order_id")),
        "the insert, then the partial update that doubled each amount");
    assertEquals(2, read("fluss.pyspark_visits").count());
    assertEquals(
        List.of(row(7L, "seven")),
        rows(spark.read().parquet(tmp.resolve("fluxgate-py-clicks").toString())));
  }
}
