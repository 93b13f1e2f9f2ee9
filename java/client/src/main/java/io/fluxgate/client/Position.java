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

  @JsonValue
  Object json() {
    return json;
  }

  /**
   * Reads a position's JSON as the server does: one of the named positions, {"timestamp": ms} or
   * {"offsets": {"bucket": offset}} with buckets spelled canonically and nothing negative.
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
      Map<Integer, Long> offsets = new TreeMap<>();
      for (Map.Entry<String, JsonNode> e : node.get("offsets").properties()) {
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
      return atOffsets(offsets);
    }
    throw new IllegalArgumentException(
        "position " + node + ": want exactly one of \"timestamp\" or \"offsets\"");
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
