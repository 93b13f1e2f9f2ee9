package io.fluxgate.client;

import com.fasterxml.jackson.annotation.JsonValue;
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
