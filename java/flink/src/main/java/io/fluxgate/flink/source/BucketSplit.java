package io.fluxgate.flink.source;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fluxgate.client.Predicates;
import io.fluxgate.client.SystemColumns;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.flink.api.connector.source.SourceSplit;

/**
 * One bucket of a scan: a ticket of the scan's plan (PROTOCOL.md §4.3), which is JSON and complete
 * in itself, so resuming is the same ticket with a later start. Its kind follows from the ticket
 * ({@link #of}): a {@link SnapshotSplit} first reads the bucket's current rows, a {@link LogSplit}
 * its log from an offset, a {@link LakeSplit} its lake rows (then, in a union read, its log), and a
 * {@link MultiBucketSplit} (a limit's) several buckets in turn, which it cannot resume.
 *
 * <p>A snapshot has no offset to resume from inside it, and taking it again gives the rows at a
 * later offset. So a split records cuts instead: keys up to {@code cut.key} were emitted as of
 * offset {@code cut.offset} (the snapshot's). Resuming, the snapshot is taken again for the keys
 * above the last cut only, and the changelog that follows is read from the earliest cut's offset,
 * each key range from its own cut's offset on: every key goes through exactly once.
 */
public abstract sealed class BucketSplit implements SourceSplit
    permits SnapshotSplit, LogSplit, LakeSplit, MultiBucketSplit {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Keys up to key (all keys above the previous cut when key is null) emitted as of offset. */
  record Cut(List<Object> key, long offset) {}

  private final String id;
  private final byte[] ticket;
  private final List<String> keyColumns;
  private final List<Cut> cuts;

  BucketSplit(String id, byte[] ticket, List<String> keyColumns, List<Cut> cuts) {
    this.id = id;
    this.ticket = ticket;
    this.keyColumns = List.copyOf(keyColumns);
    this.cuts = List.copyOf(cuts);
  }

  /** The split of the kind ticket reads. */
  static BucketSplit of(String id, byte[] ticket, List<String> keyColumns, List<Cut> cuts) {
    ObjectNode t = json(id, ticket);
    String view = t.path("view").asText();
    if (t.has("then")) {
      return new MultiBucketSplit(id, ticket, keyColumns, cuts);
    } else if (view.equals("snapshot") || t.path("snapshot").asBoolean(false)) {
      return new SnapshotSplit(id, ticket, keyColumns, cuts);
    } else if (view.equals("lake") || view.equals("union")) {
      return new LakeSplit(id, ticket, keyColumns, cuts);
    }
    return new LogSplit(id, ticket, keyColumns, cuts);
  }

  static BucketSplit of(String id, byte[] ticket, List<String> keyColumns) {
    return of(id, ticket, keyColumns, List.of());
  }

  @Override
  public final String splitId() {
    return id;
  }

  /** The planned ticket as resumed so far, without the cuts' filters. */
  final byte[] ticket() {
    return ticket;
  }

  final List<String> keyColumns() {
    return keyColumns;
  }

  final List<Cut> cuts() {
    return cuts;
  }

  /** The ticket to redeem now. */
  abstract byte[] readTicket();

  /** A split of the same bucket: ticket t, these cuts. */
  final BucketSplit with(ObjectNode t, List<Cut> next) {
    return of(id, bytes(t), keyColumns, next);
  }

  /** The ticket with filter and the ticket's own filter both applied. */
  static byte[] filtered(ObjectNode t, JsonNode filter) {
    if (filter != null) {
      t.set("filter", t.hasNonNull("filter") ? Predicates.and(t.get("filter"), filter) : filter);
    }
    return bytes(t);
  }

  /** Keys above the cut before i (all for the first), up to cut i's key, from its offset on. */
  final JsonNode cutsFilter() {
    if (cuts.isEmpty()) {
      return null;
    }
    JsonNode[] ranges = new JsonNode[cuts.size()];
    for (int i = 0; i < cuts.size(); i++) {
      List<JsonNode> terms = new ArrayList<>();
      if (i > 0) {
        terms.add(SnapshotKeys.above(keyColumns, cuts.get(i - 1).key()));
      }
      if (cuts.get(i).key() != null) {
        terms.add(Predicates.not(SnapshotKeys.above(keyColumns, cuts.get(i).key())));
      }
      terms.add(Predicates.ge(SystemColumns.LOG_OFFSET, cuts.get(i).offset()));
      ranges[i] = terms.size() == 1 ? terms.get(0) : Predicates.and(terms.toArray(JsonNode[]::new));
    }
    return ranges.length == 1 ? ranges[0] : Predicates.or(ranges);
  }

  /** cuts, or none once the log read is past all of them: every key reads from next on. */
  static List<Cut> cutsFrom(List<Cut> cuts, long next) {
    return cuts.stream().allMatch(c -> c.offset() <= next) ? List.of() : cuts;
  }

  final ObjectNode json() {
    return json(id, ticket);
  }

  private static ObjectNode json(String id, byte[] ticket) {
    try {
      return (ObjectNode) JSON.readTree(ticket);
    } catch (IOException e) {
      throw new UncheckedIOException("bad ticket of split " + id, e);
    }
  }

  static byte[] bytes(JsonNode json) {
    try {
      return JSON.writeValueAsBytes(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The split's state (ticket, key columns, cuts) as JSON, for checkpoints. */
  final byte[] state() {
    ObjectNode s = JSON.createObjectNode();
    s.set("ticket", json());
    s.set("key", JSON.valueToTree(keyColumns));
    ArrayNode array = s.putArray("cuts");
    for (Cut c : cuts) {
      ObjectNode n = array.addObject();
      n.set("key", JSON.valueToTree(c.key()));
      n.put("offset", c.offset());
    }
    return bytes(s);
  }

  static BucketSplit fromState(String id, byte[] state) throws IOException {
    JsonNode s = JSON.readTree(state);
    List<String> key = new ArrayList<>();
    s.path("key").forEach(k -> key.add(k.asText()));
    List<Cut> cuts = new ArrayList<>();
    for (JsonNode c : s.path("cuts")) {
      List<Object> values =
          c.get("key").isNull() ? null : JSON.convertValue(c.get("key"), List.class);
      cuts.add(new Cut(values, c.get("offset").asLong()));
    }
    return of(id, bytes(s.get("ticket")), key, cuts);
  }

  @Override
  public final boolean equals(Object o) {
    return o instanceof BucketSplit s && id.equals(s.id) && Arrays.equals(state(), s.state());
  }

  @Override
  public final int hashCode() {
    return id.hashCode();
  }

  @Override
  public String toString() {
    return getClass().getSimpleName()
        + "["
        + id
        + (cuts.isEmpty() ? "" : ", " + cuts.size() + " cuts")
        + "]";
  }
}
