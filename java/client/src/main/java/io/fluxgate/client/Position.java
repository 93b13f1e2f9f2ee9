package io.fluxgate.client;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonValue;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.Map;
import java.util.TreeMap;

/**
 * A place in a table's buckets: the startup and stop of a scan and the "at" of list-offsets
 * (PROTOCOL.md §4.2).
 */
public final class Position {
  /** The table's current rows, then what follows (Fluss's scan.startup.mode=full). */
  public static final Position FULL = new Position("full");

  public static final Position EARLIEST = new Position("earliest");
  public static final Position LATEST = new Position("latest");

  /** The stop of a scan that follows the table: it never ends by itself. */
  public static final Position UNBOUNDED = new Position("none");

  private final Object json;

  private Position(Object json) {
    this.json = json;
  }

  /** The first batch committed at or after ms (epoch milliseconds). */
  public static Position atTimestamp(long ms) {
    return new Position(Map.of("timestamp", ms));
  }

  /** Per-bucket offsets; as a startup, buckets not named start at the earliest offset. */
  public static Position atOffsets(Map<Integer, Long> offsets) {
    return new Position(Map.of("offsets", new TreeMap<>(offsets)));
  }

  /**
   * Per-partition, per-bucket offsets of a partitioned table; as a startup, partitions and buckets
   * not named start at the earliest offset, as a stop at the latest.
   */
  public static Position atPartitionOffsets(Map<String, Map<Integer, Long>> offsets) {
    Map<String, Map<Integer, Long>> sorted = new TreeMap<>();
    offsets.forEach((partition, buckets) -> sorted.put(partition, new TreeMap<>(buckets)));
    return new Position(Map.of("partition_offsets", sorted));
  }

  @JsonValue
  Object json() {
    return json;
  }

  /**
   * Reads a position's JSON as the server does: one of the named positions, {"timestamp": ms} or
   * {"offsets": {"bucket": offset}} with buckets spelled canonically and nothing negative, or
   * {"partition_offsets": {"partition": {"bucket": offset}}}.
   */
  @JsonCreator(mode = JsonCreator.Mode.DELEGATING)
  static Position fromJson(JsonNode node) {
    if (node.isTextual()) {
      for (Position p : new Position[] {FULL, EARLIEST, LATEST, UNBOUNDED}) {
        if (p.json.equals(node.textValue())) {
          return p;
        }
      }
      throw new IllegalArgumentException(
          "position " + node + ": want full, earliest, latest or none");
    }
    if (node.isObject() && node.size() == 1 && node.path("timestamp").canConvertToExactIntegral()) {
      long ms = node.get("timestamp").longValue();
      if (ms < 0) {
        throw new IllegalArgumentException("position timestamp " + ms + " is negative");
      }
      return atTimestamp(ms);
    }
    if (node.isObject() && node.size() == 1 && node.path("offsets").isObject()) {
      return atOffsets(offsets(node.get("offsets")));
    }
    if (node.isObject() && node.size() == 1 && node.path("partition_offsets").isObject()) {
      Map<String, Map<Integer, Long>> partitions = new TreeMap<>();
      for (Map.Entry<String, JsonNode> e : node.get("partition_offsets").properties()) {
        if (e.getKey().isEmpty() || !e.getValue().isObject()) {
          throw new IllegalArgumentException(
              "position partition_offsets: partition \"" + e.getKey() + "\" needs bucket offsets");
        }
        partitions.put(e.getKey(), offsets(e.getValue()));
      }
      return atPartitionOffsets(partitions);
    }
    throw new IllegalArgumentException(
        "position "
            + node
            + ": want exactly one of \"timestamp\", \"offsets\" or \"partition_offsets\"");
  }

  /** {"bucket": offset, ...} with buckets spelled canonically and no offset negative. */
  private static Map<Integer, Long> offsets(JsonNode node) {
    Map<Integer, Long> offsets = new TreeMap<>();
    for (Map.Entry<String, JsonNode> e : node.properties()) {
      int bucket = bucket(e.getKey());
      if (!e.getValue().canConvertToExactIntegral() || e.getValue().longValue() < 0) {
        throw new IllegalArgumentException(
            "position offsets: offset "
                + e.getValue()
                + " of bucket "
                + bucket
                + " is not an offset");
      }
      offsets.put(bucket, e.getValue().longValue());
    }
    return offsets;
  }

  /** A bucket number in its only spelling: "01" or "+1" would name bucket 1 twice. */
  private static int bucket(String key) {
    try {
      int b = Integer.parseInt(key);
      if (b >= 0 && Integer.toString(b).equals(key)) {
        return b;
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw new IllegalArgumentException("position offsets: \"" + key + "\" is not a bucket number");
  }

  /** Whether this is {"timestamp": ms}. */
  boolean isTimestamp() {
    return json instanceof Map<?, ?> m && m.containsKey("timestamp");
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof Position p && p.json.equals(json);
  }

  @Override
  public int hashCode() {
    return json.hashCode();
  }

  @Override
  public String toString() {
    return json.toString();
  }
}
