package io.fluxgate.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;

/**
 * The {"lookup": ...} command of DoExchange (PROTOCOL.md §6.1).
 *
 * @param columns returned after _key_index, in this order; null for every table column
 * @param prefix the keys are the bucket-key columns (plus the partition keys of a partitioned
 *     table) and every row with that prefix is returned
 * @param insertIfNotExists every absent key is inserted as (key, NULLs, new auto-increment id)
 * @param createPartitions false keeps insertIfNotExists from creating a missing partition (its keys
 *     then give no row); null is true
 */
public record LookupRequest(
    String table,
    List<String> columns,
    boolean prefix,
    boolean insertIfNotExists,
    Boolean createPartitions) {

  /** A point lookup of every column. */
  public static LookupRequest of(String table) {
    return new LookupRequest(table, null, false, false, null);
  }

  public LookupRequest withColumns(String... columns) {
    return new LookupRequest(table, List.of(columns), prefix, insertIfNotExists, createPartitions);
  }

  public LookupRequest asPrefix() {
    return new LookupRequest(table, columns, true, insertIfNotExists, createPartitions);
  }

  public LookupRequest insertingIfNotExists() {
    return new LookupRequest(table, columns, prefix, true, createPartitions);
  }

  /** Whether insertIfNotExists creates a missing partition (the default) or leaves its keys out. */
  public LookupRequest withCreatePartitions(boolean create) {
    return new LookupRequest(table, columns, prefix, insertIfNotExists, create);
  }

  /** The {"lookup": ...} command of an inline lookup of these keys (§6.3). */
  byte[] inlineCommand(List<Map<String, Object>> keys) {
    ObjectNode lookup = Json.MAPPER.valueToTree(this);
    lookup.set("keys", Json.MAPPER.valueToTree(keys));
    ObjectNode cmd = Json.MAPPER.createObjectNode();
    cmd.set("lookup", lookup);
    return Json.encode(cmd);
  }
}
