package io.fluxgate.flink.source;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fluxgate.client.ConnectionSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.flight.Action;
import org.apache.arrow.flight.FlightDescriptor;
import org.apache.arrow.flight.FlightEndpoint;
import org.apache.arrow.flight.FlightInfo;
import org.apache.arrow.flight.FlightServer;
import org.apache.arrow.flight.Location;
import org.apache.arrow.flight.NoOpFlightProducer;
import org.apache.arrow.flight.Result;
import org.apache.arrow.flight.Ticket;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A stand-in for the server's read path, in this JVM, so that the source's enumerator and reader
 * are tested without the server binary: a log table of one BIGINT column "id", whose partitions
 * (or, unpartitioned, the table itself) each have buckets holding ids at offsets 0, 1, ... It plans
 * scans (GetFlightInfo: one log ticket per partition and bucket, stop "latest" resolved to the end
 * of the log), serves tickets (DoGet, in batches of {@link #BATCH} rows, each with its offsets in
 * app_metadata, as PROTOCOL.md §4.3 has them) and lists partitions (DoAction "list-partitions"). An
 * unbounded ticket's stream stays open after the rows until the fake is closed.
 */
public final class FakeFlightServer implements AutoCloseable {
  static final int BATCH = 3;
  static final String TABLE = "fluss.fake";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Schema SCHEMA =
      new Schema(List.of(Field.nullable("id", new ArrowType.Int(64, true))));

  private final BufferAllocator allocator = new RootAllocator();
  private final int buckets;

  /** Each partition's id and its buckets' ids in offset order; "" for an unpartitioned table. */
  private final Map<String, Long> partitionIds = new TreeMap<>();

  private final Map<String, List<List<Long>>> rows = new TreeMap<>();
  private final AtomicInteger plans = new AtomicInteger();
  private JsonNode lastScan;

  /** DoGets whose handler has not returned: close waits for them to free their batches. */
  private int streaming;

  /** Released by close: an unbounded DoGet's handler waits for it. */
  private final CountDownLatch closing = new CountDownLatch(1);

  private final FlightServer server;

  FakeFlightServer(int buckets) throws IOException {
    this.buckets = buckets;
    server =
        FlightServer.builder(allocator, Location.forGrpcInsecure("localhost", 0), new Producer())
            .build()
            .start();
  }

  ConnectionSettings connection() {
    return ConnectionSettings.of("grpc://localhost:" + server.getPort());
  }

  /** Adds ids to bucket of partition ("" for none), creating the partition with id. */
  synchronized void append(String partition, long id, int bucket, long... ids) {
    partitionIds.putIfAbsent(partition, id);
    List<List<Long>> bs = rows.computeIfAbsent(partition, p -> new ArrayList<>());
    while (bs.size() < buckets) {
      bs.add(new ArrayList<>());
    }
    for (long v : ids) {
      bs.get(bucket).add(v);
    }
  }

  /** How many scans were planned. */
  int plans() {
    return plans.get();
  }

  /** The last scan planned, as the client sent it. */
  synchronized JsonNode lastScan() {
    return lastScan;
  }

  private synchronized ObjectNode plan(JsonNode scan) {
    plans.incrementAndGet();
    lastScan = scan;
    List<String> wanted = new ArrayList<>();
    scan.path("partitions").forEach(p -> wanted.add(p.asText()));
    boolean bounded = scan.path("stop").asText().equals("latest");
    ArrayNode tickets = JSON.createArrayNode();
    ArrayNode partitions = JSON.createArrayNode();
    for (Map.Entry<String, List<List<Long>>> p : rows.entrySet()) {
      if (!wanted.isEmpty() && !wanted.contains(p.getKey())) {
        continue;
      }
      if (!p.getKey().isEmpty()) {
        partitions
            .addObject()
            .put("partition_id", partitionIds.get(p.getKey()))
            .put("partition_name", p.getKey());
      }
      for (int b = 0; b < buckets; b++) {
        ObjectNode t = tickets.addObject().put("v", 1).put("table", TABLE).put("bucket", b);
        if (!p.getKey().isEmpty()) {
          t.put("partition_id", partitionIds.get(p.getKey())).put("partition", p.getKey());
        }
        t.put("start", 0);
        if (bounded) {
          t.put("stop", p.getValue().get(b).size());
        } else {
          t.putNull("stop");
        }
      }
    }
    ObjectNode plan = JSON.createObjectNode();
    plan.set("tickets", tickets);
    plan.set("partitions", partitions);
    return plan;
  }

  private synchronized List<Long> log(JsonNode ticket) {
    List<List<Long>> bs = rows.get(ticket.path("partition").asText(""));
    return bs == null ? null : List.copyOf(bs.get(ticket.get("bucket").asInt()));
  }

  private final class Producer extends NoOpFlightProducer {
    @Override
    public FlightInfo getFlightInfo(CallContext context, FlightDescriptor descriptor) {
      ObjectNode plan = plan(read(descriptor.getCommand()).get("scan"));
      List<FlightEndpoint> endpoints = new ArrayList<>();
      plan.get("tickets").forEach(t -> endpoints.add(new FlightEndpoint(new Ticket(bytes(t)))));
      ObjectNode meta = JSON.createObjectNode().put("table_id", 1).put("buckets", buckets);
      meta.set("partitions", plan.get("partitions"));
      return FlightInfo.builder(SCHEMA, descriptor, endpoints).setAppMetadata(bytes(meta)).build();
    }

    @Override
    public void getStream(CallContext context, Ticket ticket, ServerStreamListener listener) {
      JsonNode t = read(ticket.getBytes());
      List<Long> log = log(t);
      if (log == null) {
        listener.error(
            org.apache.arrow.flight.CallStatus.NOT_FOUND
                .withDescription("no partition " + t.path("partition").asText())
                .toRuntimeException());
        return;
      }
      long stop = t.get("stop").isNull() ? log.size() : t.get("stop").asLong();
      synchronized (FakeFlightServer.this) {
        streaming++;
      }
      try (VectorSchemaRoot root = VectorSchemaRoot.create(SCHEMA, allocator)) {
        listener.start(root);
        BigIntVector ids = (BigIntVector) root.getVector(0);
        for (long at = t.get("start").asLong(); at < stop; ) {
          long end = Math.min(stop, at + BATCH);
          ids.allocateNew((int) (end - at));
          for (long o = at; o < end; o++) {
            ids.set((int) (o - at), log.get((int) o));
          }
          root.setRowCount((int) (end - at));
          ObjectNode meta =
              JSON.createObjectNode()
                  .put("bucket", t.get("bucket").asInt())
                  .put("start", at)
                  .put("next", end)
                  .put("high_watermark", log.size());
          byte[] m = bytes(meta);
          ArrowBuf buf = allocator.buffer(m.length);
          buf.writeBytes(m);
          listener.putNext(buf);
          at = end;
        }
        if (t.get("stop").isNull()) {
          // A follow never ends. (The call's cancel callback would wait for this handler: gRPC
          // runs a call's callbacks one at a time.)
          closing.await();
        }
        listener.completed();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        listener.error(e);
      } finally {
        synchronized (FakeFlightServer.this) {
          streaming--;
          FakeFlightServer.this.notifyAll();
        }
      }
    }

    @Override
    public void doAction(CallContext context, Action action, StreamListener<Result> listener) {
      if (!action.getType().equals("list-partitions")) {
        listener.onError(
            org.apache.arrow.flight.CallStatus.UNIMPLEMENTED
                .withDescription(action.getType())
                .toRuntimeException());
        return;
      }
      ArrayNode partitions = JSON.createArrayNode();
      synchronized (FakeFlightServer.this) {
        partitionIds.forEach(
            (name, id) -> {
              if (!name.isEmpty()) {
                partitions.addObject().put("partition_id", id).put("partition_name", name);
              }
            });
      }
      ObjectNode body = JSON.createObjectNode();
      body.set("partitions", partitions);
      listener.onNext(new Result(bytes(body)));
      listener.onCompleted();
    }
  }

  private static JsonNode read(byte[] json) {
    try {
      return JSON.readTree(json);
    } catch (IOException e) {
      throw new IllegalArgumentException(new String(json, StandardCharsets.UTF_8), e);
    }
  }

  private static byte[] bytes(JsonNode json) {
    try {
      return JSON.writeValueAsBytes(json);
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close() throws Exception {
    closing.countDown();
    long deadline = System.nanoTime() + 10_000_000_000L;
    synchronized (this) {
      for (long left; streaming > 0 && (left = deadline - System.nanoTime()) > 0; ) {
        wait(Math.max(1, left / 1_000_000));
      }
    }
    server.shutdown();
    server.awaitTermination();
    server.close();
    allocator.close();
  }
}
