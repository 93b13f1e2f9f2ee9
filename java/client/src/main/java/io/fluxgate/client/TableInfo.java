package io.fluxgate.client;

import com.fasterxml.jackson.annotation.JsonIgnore;
import java.util.List;
import java.util.Map;

/**
 * A table as stored (PROTOCOL.md §3): its spec with every defaulted option filled in, plus what the
 * server assigned.
 *
 * @param tableId new each time a table of this name is created
 * @param createdAt epoch milliseconds
 * @param kind "log" or "primary_key"
 * @param indexes "primary_key" and, where §6.2 allows, "prefix"
 */
public record TableInfo(
    String table,
    List<Column> columns,
    List<String> primaryKey,
    List<String> partitionKeys,
    Map<String, String> options,
    String comment,
    long tableId,
    long schemaId,
    long createdAt,
    String kind,
    List<Index> indexes) {

  /** One lookup index of a table. */
  public record Index(String name, List<String> columns) {}

  /** Not a member of the JSON: derived from partition_keys. */
  @JsonIgnore
  public boolean isPartitioned() {
    return partitionKeys != null && !partitionKeys.isEmpty();
  }

  public boolean hasPrimaryKey() {
    return "primary_key".equals(kind);
  }

  /** The table's definition, as create-table would take it. */
  public TableSpec spec() {
    return new TableSpec(table, columns, primaryKey, partitionKeys, options, comment);
  }
}
