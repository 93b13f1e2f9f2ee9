package io.fluxgate.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.ErrorInfo;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import java.util.ArrayList;
import java.util.List;

/**
 * Resuming a DoGet stream the server ended because its reader took nothing for the idle timeout
 * (PROTOCOL.md §1, Limits, and §4.3, Resuming a read): the Go package protocol's ResumeTicket, on
 * tickets as JSON trees.
 */
final class StreamResume {
  private static final String DOMAIN = "fluxgate.io";
  private static final String REASON = "STREAM_IDLE";
  private static final String[] RANGE = {"partition_id", "partition", "bucket", "start", "stop"};

  private StreamResume() {}

  /** A read that cannot resume where it stopped: inside a snapshot, or a lake part of several. */
  static final class CannotResume extends Exception {
    private static final long serialVersionUID = 1L;

    CannotResume(String message) {
      super(message);
    }
  }

  /**
   * Whether t ended a stream for the idle timeout: RESOURCE_EXHAUSTED with the detail
   * google.rpc.ErrorInfo{reason: STREAM_IDLE, domain: fluxgate.io}.
   */
  static boolean endedIdle(Throwable t) {
    com.google.rpc.Status st = StatusProto.fromThrowable(t);
    return st != null && endedIdle(st);
  }

  static boolean endedIdle(com.google.rpc.Status st) {
    if (st.getCode() != Status.Code.RESOURCE_EXHAUSTED.value()) {
      return false;
    }
    for (Any detail : st.getDetailsList()) {
      if (detail.is(ErrorInfo.class)) {
        try {
          ErrorInfo info = detail.unpack(ErrorInfo.class);
          if (DOMAIN.equals(info.getDomain()) && REASON.equals(info.getReason())) {
            return true;
          }
        } catch (InvalidProtocolBufferException e) {
          return false;
        }
      }
    }
    return false;
  }

  /**
   * The ticket that reads what ticket has left after its stream delivered batches up to last (null:
   * none), rows rows in all: the same read from last's next on; null when nothing is left.
   */
  static ObjectNode ticket(ObjectNode ticket, BatchMeta last, long rows) throws CannotResume {
    if (last == null) {
      return ticket;
    }
    ObjectNode t = ticket.deepCopy();
    String view = t.path("view").asText();
    if (view.equals("lookup")) {
      throw new CannotResume("an inline lookup cannot resume: look the keys up again");
    }
    if (Boolean.TRUE.equals(last.snapshot())) {
      throw new CannotResume("a snapshot cannot resume at an offset: read it again");
    }
    if (present(t, "limit")) {
      long left = t.get("limit").asLong() - rows;
      if (left <= 0) {
        return null;
      }
      t.put("limit", left);
    }
    List<ObjectNode> ranges = new ArrayList<>();
    ObjectNode first = Json.MAPPER.createObjectNode();
    for (String k : RANGE) {
      if (t.has(k)) {
        first.set(k, t.get(k));
      }
    }
    ranges.add(first);
    if (t.has("then")) {
      t.get("then").forEach(r -> ranges.add((ObjectNode) r.deepCopy()));
    }
    long partitionId = last.partitionId() == null ? 0 : last.partitionId();
    int i = 0;
    while (i < ranges.size()
        && (ranges.get(i).path("partition_id").asLong(0) != partitionId
            || ranges.get(i).path("bucket").asInt() != last.bucket())) {
      i++;
    }
    if (i == ranges.size()) {
      throw new CannotResume(
          "batch of bucket "
              + last.bucket()
              + " (partition "
              + last.partition()
              + ") is not of the ticket's ranges");
    }
    ObjectNode cur = ranges.get(i);
    List<ObjectNode> rest = new ArrayList<>(ranges.subList(i + 1, ranges.size()));
    long next = last.next();
    boolean union = view.equals("union");
    if (view.equals("lake") || (union && next < cur.path("start").asLong())) {
      if (!rest.isEmpty()) { // lake_start takes a single range
        throw new CannotResume(
            "a lake read of several buckets (a limit) cannot resume: read it again");
      }
      t.put("lake_start", next);
    } else if (!present(cur, "stop") || next < cur.get("stop").asLong()) {
      // The rest of this range without its snapshot or lake part, which were sent, and the
      // ranges after it with theirs: one ticket cannot say both.
      if ((t.path("snapshot").asBoolean() || union) && !rest.isEmpty()) {
        throw new CannotResume(
            "a read of several buckets (a limit) cannot resume past a snapshot or lake part: read"
                + " it again");
      }
      cur.put("start", next);
      t.remove("snapshot");
      if (union) {
        t.put("view", "log");
        t.putNull("lake_snapshot_id");
        t.remove("lake_start");
      }
    } else if (rest.isEmpty()) {
      return null;
    } else { // this range is done: the next one, whole
      cur = rest.remove(0);
    }
    for (String k : RANGE) {
      JsonNode v = cur.get(k);
      if (present(cur, k) || k.equals("stop")) {
        t.set(k, v == null ? Json.MAPPER.nullNode() : v);
      } else {
        t.remove(k);
      }
    }
    if (rest.isEmpty()) {
      t.remove("then");
    } else {
      ArrayNode then = t.putArray("then");
      rest.forEach(then::add);
    }
    return t;
  }

  private static boolean present(JsonNode node, String field) {
    return node.has(field) && !node.get(field).isNull();
  }
}
