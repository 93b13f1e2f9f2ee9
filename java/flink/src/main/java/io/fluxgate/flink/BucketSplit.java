package io.fluxgate.flink;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fluxgate.client.Predicates;
import io.fluxgate.client.SystemColumns;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.api.connector.source.SourceSplit;

/**
 * One bucket of a scan: a ticket of the scan's plan (PROTOCOL.md §4.3), which is JSON and complete
 * in itself, so resuming is the same ticket with a later start.
 *
 * <p>A snapshot (a primary-key table's current rows) has no offset to resume from inside it, and
 * taking it again gives the rows at a later offset. So a split records cuts instead: keys up to
 * {@code cut.key} were emitted as of offset {@code cut.offset} (the snapshot's). Resuming, the
 * snapshot is taken again for the keys above the last cut only, and the changelog that follows is
 * read from the earliest cut's offset, each key range from its own cut's offset on: every key goes
 * through exactly once.
 */
final class BucketSplit implements SourceSplit {
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

  BucketSplit(String id, byte[] ticket, List<String> keyColumns) {
    this(id, ticket, keyColumns, List.of());
  }

  @Override
  public String splitId() {
    return id;
  }

  /** The planned ticket as resumed so far, without the cuts' filters. */
  byte[] ticket() {
    return ticket;
  }

  List<String> keyColumns() {
    return keyColumns;
  }

  List<Cut> cuts() {
    return cuts;
  }

  /** Whether what is left begins with a snapshot of the bucket's rows. */
  boolean inSnapshot() {
    ObjectNode t = json();
    return t.path("view").asText().equals("snapshot") || t.path("snapshot").asBoolean(false);
  }

  /**
   * The ticket to redeem now: in the snapshot phase the snapshot alone (a changelog ticket ends
   * after it with stop 0), above the last cut; after it the log, each cut's keys from its offset.
   */
  byte[] readTicket() {
    ObjectNode t = json();
    List<JsonNode> filters = new ArrayList<>();
    if (t.hasNonNull("filter")) {
      filters.add(t.get("filter"));
    }
    if (inSnapshot()) {
      if (t.path("snapshot").asBoolean(false)) {
        t.put("start", 0);
        t.put("stop", 0);
      }
      if (!cuts.isEmpty()) {
        filters.add(SnapshotKeys.above(keyColumns, cuts.get(cuts.size() - 1).key()));
      }
    } else if (!cuts.isEmpty()) {
      filters.add(cutsFilter());
    }
    if (!filters.isEmpty()) {
      t.set(
          "filter",
          filters.size() == 1 ? filters.get(0) : Predicates.and(filters.toArray(JsonNode[]::new)));
    }
    return bytes(t);
  }

  /** Each cut's key range from its offset on. */
  private JsonNode cutsFilter() {
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

  /** Whether the split can record where it is: a ticket reading several buckets cannot. */
  boolean resumable() {
    return !json().has("then");
  }

  /** This split after the snapshot's rows up to key were emitted; the snapshot is at offset. */
  BucketSplit snapshotEmitted(List<Object> key, long offset) {
    List<Cut> next = new ArrayList<>(cuts);
    next.add(new Cut(key, offset));
    return new BucketSplit(id, ticket, keyColumns, next);
  }

  /**
   * This split once its snapshot (taken at offset) was emitted whole: the changelog from the
   * earliest cut, or null when nothing follows (a plain snapshot, or the stop is reached).
   */
  BucketSplit afterSnapshot(long offset) {
    ObjectNode t = json();
    if (t.path("view").asText().equals("snapshot")) {
      return null;
    }
    t.put("snapshot", false);
    List<Cut> next = new ArrayList<>();
    long start = offset;
    if (!cuts.isEmpty()) {
      next.addAll(cuts);
      next.add(new Cut(null, offset));
      start = cuts.stream().mapToLong(Cut::offset).min().getAsLong();
    }
    if (t.hasNonNull("stop") && start >= t.get("stop").asLong()) {
      return null;
    }
    t.put("start", start);
    return new BucketSplit(id, bytes(t), keyColumns, next).withoutCutsBelow(start);
  }

  /**
   * This split from next on: the log after the batches already emitted; in a union read's lake
   * part, the lake rows from next on.
   */
  BucketSplit resumeAt(long next) {
    ObjectNode t = json();
    String view = t.path("view").asText();
    if (view.equals("lake") || (view.equals("union") && next < t.path("start").asLong())) {
      t.put("lake_start", next);
    } else {
      if (view.equals("union")) {
        t.put("view", "log"); // the lake part is done
        t.remove("lake_snapshot_id");
        t.remove("lake_start");
      }
      t.put("start", next);
    }
    return new BucketSplit(id, bytes(t), keyColumns, cuts).withoutCutsBelow(next);
  }

  /** Without the cuts once the log read is past all of them: every key reads from here. */
  private BucketSplit withoutCutsBelow(long next) {
    boolean past = cuts.stream().allMatch(c -> c.offset() <= next);
    return past && !cuts.isEmpty() ? new BucketSplit(id, ticket, keyColumns, List.of()) : this;
  }

  private ObjectNode json() {
    try {
      return (ObjectNode) JSON.readTree(ticket);
    } catch (IOException e) {
      throw new UncheckedIOException("bad ticket of split " + id, e);
    }
  }

  private static byte[] bytes(JsonNode json) {
    try {
      return JSON.writeValueAsBytes(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The split's state (ticket, key columns, cuts) as JSON, for checkpoints. */
  byte[] state() {
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
    return new BucketSplit(id, bytes(s.get("ticket")), key, cuts);
  }

  @Override
  public String toString() {
    return "BucketSplit[" + id + (cuts.isEmpty() ? "" : ", " + cuts.size() + " cuts") + "]";
  }
}
