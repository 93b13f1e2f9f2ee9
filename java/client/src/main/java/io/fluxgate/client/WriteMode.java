package io.fluxgate.client;

import com.fasterxml.jackson.annotation.JsonValue;

/** How a DoPut stream applies its rows (PROTOCOL.md §5). */
public enum WriteMode {
  /** Log tables. */
  APPEND("append"),
  UPSERT("upsert"),
  /** The batches carry the primary key; other columns are ignored. */
  DELETE("delete"),
  /**
   * The batches carry a _change_type column: insert and update_after upsert, delete deletes,
   * update_before is skipped.
   */
  CHANGELOG("changelog");

  private final String wire;

  WriteMode(String wire) {
    this.wire = wire;
  }

  @JsonValue
  public String wire() {
    return wire;
  }
}
