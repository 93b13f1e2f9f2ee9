package io.fluxgate.client;

import java.util.List;
import java.util.Map;

/**
 * The body of alter-table: options to set or reset, and nullable columns to add at the end. Only
 * table.datalake.enabled, table.datalake.freshness and table.log.ttl may change.
 */
public record AlterRequest(
    String table, Map<String, String> set, List<String> reset, List<Column> addColumns) {

  public static AlterRequest of(String table) {
    return new AlterRequest(table, Map.of(), List.of(), List.of());
  }

  public AlterRequest withSet(Map<String, String> set) {
    return new AlterRequest(table, set, reset, addColumns);
  }

  public AlterRequest withReset(String... keys) {
    return new AlterRequest(table, set, List.of(keys), addColumns);
  }

  public AlterRequest withAddColumns(Column... columns) {
    return new AlterRequest(table, set, reset, List.of(columns));
  }
}
