package io.fluxgate.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.InvalidProtocolBufferException;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Reads that resume when the server ends their stream because they took nothing for its idle
 * timeout (PROTOCOL.md §1, Limits; §4.3, Resuming a read), against the shared vectors of
 * protocol/testdata/resume.json and a real server.
 */
class StreamResumeTest {
  private static final JsonNode VECTORS = vectors();

  private static JsonNode vectors() {
    try {
      return Json.MAPPER.readTree(
          Files.readString(Path.of("../../protocol/testdata/resume.json").toAbsolutePath()));
    } catch (IOException e) {
      throw new IllegalStateException("no shared vectors: " + e, e);
    }
  }

  @TestFactory
  Stream<DynamicTest> resumeTicketVectors() {
    List<DynamicTest> tests = new ArrayList<>();
    VECTORS
        .get("cases")
        .forEach(
            c ->
                tests.add(
                    DynamicTest.dynamicTest(
                        c.get("name").asText(),
                        () -> {
                          ObjectNode ticket = (ObjectNode) c.get("ticket");
                          BatchMeta last =
                              c.get("last").isNull()
                                  ? null
                                  : Json.MAPPER.convertValue(c.get("last"), BatchMeta.class);
                          long rows = c.get("rows").asLong();
                          if (c.path("error").asBoolean()) {
                            assertThrows(
                                StreamResume.CannotResume.class,
                                () -> StreamResume.ticket(ticket, last, rows));
                            return;
                          }
                          ObjectNode got = StreamResume.ticket(ticket, last, rows);
                          if (c.get("want").isNull()) {
                            assertNull(got);
                          } else {
                            assertEquals(withoutDefaults(c.get("want")), withoutDefaults(got));
                          }
                        })));
    assertTrue(tests.size() > 0, "resume.json has no cases");
    return tests.stream();
  }

  @TestFactory
  Stream<DynamicTest> streamEndVectors() {
    List<DynamicTest> tests = new ArrayList<>();
    VECTORS
        .get("stream_ends")
        .forEach(
            c ->
                tests.add(
                    DynamicTest.dynamicTest(
                        c.get("name").asText(),
                        () -> {
                          byte[] details = HexFormat.of().parseHex(c.get("details").asText());
                          boolean idle;
                          try {
                            idle = StreamResume.endedIdle(com.google.rpc.Status.parseFrom(details));
                          } catch (InvalidProtocolBufferException e) {
                            idle = false; // what StatusProto makes of details that are not a
                            // google.rpc.Status
                          }
                          assertEquals(c.get("idle").asBoolean(), idle);
                        })));
    return tests.stream();
  }

  /** node without null, false and empty members, as the vectors compare tickets. */
  private static Object withoutDefaults(JsonNode node) {
    if (node.isArray()) {
      List<Object> out = new ArrayList<>();
      node.forEach(x -> out.add(withoutDefaults(x)));
      return out;
    }
    if (!node.isObject()) {
      return node.isNumber() ? (Object) node.asLong() : node.asText();
    }
    Map<String, Object> out = new TreeMap<>();
    node.fields()
        .forEachRemaining(
            e -> {
              JsonNode v = e.getValue();
              if (v.isNull()
                  || (v.isBoolean() && !v.asBoolean())
                  || (v.isContainerNode() && v.isEmpty())) {
                return;
              }
              out.put(e.getKey(), withoutDefaults(v));
            });
    return out;
  }

  // The stalled table: batches of ROWS rows of 1 KiB random (incompressible) bytes, far more than
  // the client's gRPC windows hold.
  private static final int BATCHES = 320;
  private static final int ROWS = 64;

  @Test
  @Timeout(120)
  void followResumesAfterTheIdleTimeout(@TempDir Path dir) throws Exception {
    int http = FluxgateServer.freePort();
    try (FluxgateServer server =
            FluxgateServer.start(
                dir, "--stream-idle-timeout", "1s", "--http", "127.0.0.1:" + http);
        RootAllocator allocator = new RootAllocator();
        FluxgateClient client =
            FluxgateClient.connect(
                server.uri(), ConnectOptions.defaults().withAllocator(allocator))) {
      String table = "fluss.stalled";
      client.createTable(
          TableSpec.of(table, Column.of("id", "BIGINT"), Column.of("payload", "BYTES"))
              .withOptions(Map.of("bucket.num", "1")),
          false);
      Schema schema = Rows.schema(client, table);
      write(client, allocator, schema, table, 0, BATCHES);
      Map<Long, Integer> seen = new TreeMap<>();
      URI metrics = URI.create("http://127.0.0.1:" + http + "/metrics");
      try (Scanner follow =
          client.scan(
              ScanRequest.of(table).withStartup(Position.EARLIEST).withStop(Position.UNBOUNDED))) {
        take(follow, seen);
        // The follower takes nothing: the server ends its stream (its only one, open since it sent
        // a batch; the resume opens the next only when next() is called again).
        waitFor("the server to end the stalled stream", () -> scansOpen(metrics) == 0);
        write(client, allocator, schema, table, BATCHES, 2);
        while (seen.size() < (BATCHES + 2) * ROWS) {
          take(follow, seen);
        }
      }
      assertEquals((BATCHES + 2) * ROWS, seen.size());
      seen.forEach((id, n) -> assertEquals(1, n, "row " + id + " read " + n + " times"));
      assertEquals((BATCHES + 2) * ROWS - 1, ((TreeMap<Long, Integer>) seen).lastKey());
    }
  }

  private static void take(Scanner follow, Map<Long, Integer> seen) {
    assertTrue(follow.next(), "the follow ended after " + seen.size() + " rows");
    BigIntVector ids = (BigIntVector) follow.root().getVector("id");
    for (int i = 0; i < ids.getValueCount(); i++) {
      seen.merge(ids.get(i), 1, Integer::sum);
    }
  }

  /**
   * Writes batches [from, from + n), built before the writer opens: it may not wait longer than the
   * idle timeout between them.
   */
  private static void write(
      FluxgateClient client,
      RootAllocator allocator,
      Schema schema,
      String table,
      int from,
      int n) {
    Random random = new Random(from);
    List<VectorSchemaRoot> batches = new ArrayList<>();
    try {
      for (int b = from; b < from + n; b++) {
        List<List<Object>> rows = new ArrayList<>();
        for (int r = 0; r < ROWS; r++) {
          byte[] payload = new byte[1024];
          random.nextBytes(payload);
          rows.add(Rows.row((long) b * ROWS + r, payload));
        }
        batches.add(Rows.batch(allocator, schema, rows));
      }
      try (TableWriter w = client.newWriter(WriteRequest.of(table))) {
        batches.forEach(w::write);
      }
    } finally {
      batches.forEach(VectorSchemaRoot::close);
    }
  }

  private static double scansOpen(URI metrics) {
    try {
      String body =
          HttpClient.newHttpClient()
              .send(HttpRequest.newBuilder(metrics).build(), HttpResponse.BodyHandlers.ofString())
              .body();
      return body.lines()
          .filter(l -> l.startsWith("fluxgate_scans_open"))
          .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
          .sum();
    } catch (IOException e) {
      throw new IllegalStateException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Polls cond until it holds, failing after a minute. */
  private static void waitFor(String what, BooleanSupplier cond) throws InterruptedException {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (!cond.getAsBoolean()) {
      assertTrue(System.nanoTime() < deadline, "waiting for " + what);
      Thread.sleep(10); // the poll's interval
    }
  }
}
