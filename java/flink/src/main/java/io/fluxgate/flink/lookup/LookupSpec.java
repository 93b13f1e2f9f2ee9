package io.fluxgate.flink.lookup;

import io.fluxgate.client.LookupRequest;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.types.logical.RowType;

/**
 * What one lookup join asks of a table, shipped with the job: which index its join keys use and how
 * Flink's key row maps onto that index's columns.
 *
 * @param columns the produced row's columns, requested in this order
 * @param keyColumns the index's columns: the primary key, or the bucket key for a prefix lookup
 * @param keyPositions for each of keyColumns, its field in Flink's key row
 * @param extraKeys join keys beyond the index: fields of Flink's key row that a returned row must
 *     equal, at extraColumns of the produced row
 */
public record LookupSpec(
    String table,
    RowType produced,
    List<String> keyColumns,
    int[] keyPositions,
    int[] extraKeys,
    int[] extraColumns,
    boolean prefix,
    boolean insertIfNotExists,
    int maxRetries)
    implements Serializable {

  /** Chooses the index for join keys at the given fields of the produced row, or says why none. */
  static LookupSpec of(LookupTable t, int[][] keys, RowType produced) {
    String table = t.name().base();
    if (t.name().view() != null) {
      throw new ValidationException(
          "lookup joins read tables, not views: " + t.name().scanned() + " has no lookup index");
    }
    if (t.primaryKey().isEmpty()) {
      throw new ValidationException(
          "lookup join on log table " + table + ": lookups need a primary-key table");
    }
    List<String> names = new ArrayList<>();
    for (int[] k : keys) {
      if (k.length != 1) {
        throw new ValidationException("lookup join on " + table + ": nested join keys");
      }
      names.add(produced.getFieldNames().get(k[0]));
    }
    List<String> index;
    boolean prefix;
    if (names.containsAll(t.primaryKey())) {
      index = t.primaryKey();
      prefix = false;
    } else {
      List<String> prefixIndex = new ArrayList<>(t.bucketKey());
      prefixIndex.addAll(t.partitionKeys());
      if (!t.hasPrefixIndex() || !names.containsAll(prefixIndex)) {
        throw new ValidationException(
            "lookup join on "
                + table
                + ": the join keys "
                + names
                + " cover neither the primary key "
                + t.primaryKey()
                + (t.hasPrefixIndex()
                    ? " nor the bucket-key prefix index " + prefixIndex
                    : " (and the table has no prefix index: its bucket key "
                        + t.bucketKey()
                        + " is not a strict prefix of the primary key)"));
      }
      index = prefixIndex;
      prefix = true;
    }
    if (t.insertIfNotExists()) {
      checkInsertIfNotExists(t, names);
    }
    int[] positions = index.stream().mapToInt(names::indexOf).toArray();
    List<Integer> extraKeys = new ArrayList<>();
    for (int i = 0; i < names.size(); i++) {
      if (!index.contains(names.get(i))) {
        extraKeys.add(i);
      }
    }
    return new LookupSpec(
        table,
        produced,
        index,
        positions,
        extraKeys.stream().mapToInt(Integer::intValue).toArray(),
        extraKeys.stream().mapToInt(i -> keys[i][0]).toArray(),
        prefix,
        t.insertIfNotExists(),
        t.maxRetries());
  }

  /** Fluss's rules: a point lookup on exactly the key; nothing else needs a value. */
  private static void checkInsertIfNotExists(LookupTable t, List<String> names) {
    String table = t.name().base();
    if (!new HashSet<>(names).equals(new HashSet<>(t.primaryKey()))) {
      throw new ValidationException(
          "'lookup.insert-if-not-exists' on "
              + table
              + " needs the join keys to be exactly the primary key "
              + t.primaryKey()
              + ", got "
              + names);
    }
    Set<String> notNull = new HashSet<>(t.notNull());
    t.primaryKey().forEach(notNull::remove);
    notNull.remove(t.autoIncrement());
    if (!notNull.isEmpty()) {
      throw new ValidationException(
          "'lookup.insert-if-not-exists' on "
              + table
              + ": columns "
              + notNull.stream().sorted().toList()
              + " are NOT NULL, but a key is inserted with NULLs in every column but the key and"
              + " the auto-increment column");
    }
  }

  /** The client's request: the produced columns, by the chosen index. */
  LookupRequest request() {
    LookupRequest r =
        LookupRequest.of(table).withColumns(produced.getFieldNames().toArray(String[]::new));
    if (prefix) {
      r = r.asPrefix();
    }
    return insertIfNotExists ? r.insertingIfNotExists() : r;
  }
}
