package io.fluxgate.client;

import com.fasterxml.jackson.annotation.JsonCreator;
import com.fasterxml.jackson.annotation.JsonProperty;

/**
 * One column of a table (PROTOCOL.md §2).
 *
 * @param type a Flink SQL type name: BIGINT, DECIMAL(10,2), TIMESTAMP(3), ARRAY&lt;INT&gt; ...
 * @param nullable false for NOT NULL; primary-key columns are NOT NULL whatever this says
 * @param comment optional, null for none
 */
public record Column(String name, String type, boolean nullable, String comment) {

  /** Reads a column; a missing "nullable" means nullable, the protocol's default. */
  @JsonCreator
  static Column fromJson(
      @JsonProperty("name") String name,
      @JsonProperty("type") String type,
      @JsonProperty("nullable") Boolean nullable,
      @JsonProperty("comment") String comment) {
    return new Column(name, type, nullable == null || nullable, comment);
  }

  /** A nullable column without comment. */
  public static Column of(String name, String type) {
    return new Column(name, type, true, null);
  }

  /** A NOT NULL column without comment. */
  public static Column notNull(String name, String type) {
    return new Column(name, type, false, null);
  }

  /** This column with a comment. */
  public Column withComment(String comment) {
    return new Column(name, type, nullable, comment);
  }
}
