package io.fluxgate.client;

import java.util.List;
import java.util.Map;

/**
 * A table definition, the body of create-table (PROTOCOL.md §2).
 *
 * @param table "database.table", or "table" for the default database
 * @param primaryKey empty for a log table
 * @param options Fluss's option names and values: bucket.num, table.merge-engine, ...
 */
public record TableSpec(
    String table,
    List<Column> columns,
    List<String> primaryKey,
    List<String> partitionKeys,
    Map<String, String> options,
    String comment) {

  /** A log table with these columns and no options. */
  public static TableSpec of(String table, Column... columns) {
    return new TableSpec(table, List.of(columns), List.of(), List.of(), Map.of(), null);
  }

  public TableSpec withPrimaryKey(String... columns) {
    return new TableSpec(table, this.columns, List.of(columns), partitionKeys, options, comment);
  }

  /**
   * A partitioned table, one partition per distinct value of these columns (Fluss's PARTITIONED
   * BY).
   */
  public TableSpec withPartitionKeys(String... columns) {
    return new TableSpec(table, this.columns, primaryKey, List.of(columns), options, comment);
  }

  public TableSpec withOptions(Map<String, String> options) {
    return new TableSpec(table, columns, primaryKey, partitionKeys, options, comment);
  }

  public TableSpec withComment(String comment) {
    return new TableSpec(table, columns, primaryKey, partitionKeys, options, comment);
  }
}
