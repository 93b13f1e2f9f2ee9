package io.fluxgate.flink.lookup;

import io.fluxgate.client.ConnectionSettings;
import io.fluxgate.flink.FluxgateOptions;
import io.fluxgate.flink.TableName;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.Column;
import org.apache.flink.table.catalog.ResolvedCatalogTable;
import org.apache.flink.table.catalog.UniqueConstraint;
import org.apache.flink.table.connector.source.LookupTableSource;
import org.apache.flink.table.connector.source.lookup.AsyncLookupFunctionProvider;
import org.apache.flink.table.connector.source.lookup.LookupFunctionProvider;
import org.apache.flink.table.connector.source.lookup.LookupOptions;
import org.apache.flink.table.connector.source.lookup.PartialCachingAsyncLookupProvider;
import org.apache.flink.table.connector.source.lookup.PartialCachingLookupProvider;
import org.apache.flink.table.connector.source.lookup.cache.DefaultLookupCache;
import org.apache.flink.table.connector.source.lookup.cache.LookupCache;
import org.apache.flink.table.types.logical.RowType;

/**
 * A table as a lookup join's dimension side: its keys and the query's lookup options, known when
 * the factory creates the source. {@link #provider} turns the planner's join keys into lookups.
 *
 * @param primaryKey empty for a log table, which no lookup can serve
 * @param bucketKey the bucket key, the primary key when the table names none
 * @param notNull the NOT NULL columns, which insert-if-not-exists cannot fill
 * @param autoIncrement the auto-increment column, null if none
 * @param cache a PARTIAL cache, null for none
 */
public record LookupTable(
    ConnectionSettings connection,
    TableName name,
    List<String> primaryKey,
    List<String> bucketKey,
    List<String> partitionKeys,
    Set<String> notNull,
    String autoIncrement,
    boolean async,
    boolean insertIfNotExists,
    int maxRetries,
    LookupCache cache)
    implements Serializable {

  public static LookupTable of(
      ConnectionSettings connection,
      TableName name,
      ResolvedCatalogTable table,
      ReadableConfig options) {
    List<String> primaryKey =
        table
            .getResolvedSchema()
            .getPrimaryKey()
            .map(UniqueConstraint::getColumns)
            .orElse(List.of());
    Map<String, String> stored = table.getOptions();
    String bucketKey = stored.get("bucket.key");
    List<String> partitionKeys = table.getPartitionKeys();
    List<String> physical = new ArrayList<>(primaryKey);
    physical.removeAll(partitionKeys);
    return new LookupTable(
        connection,
        name,
        primaryKey,
        bucketKey == null || bucketKey.isBlank() ? physical : split(bucketKey),
        partitionKeys,
        table.getResolvedSchema().getColumns().stream()
            .filter(c -> !c.getDataType().getLogicalType().isNullable())
            .map(Column::getName)
            .collect(Collectors.toSet()),
        stored.get("auto-increment.fields"),
        options.get(FluxgateOptions.LOOKUP_ASYNC),
        options.get(FluxgateOptions.LOOKUP_INSERT_IF_NOT_EXISTS),
        options.get(LookupOptions.MAX_RETRIES),
        cache(options));
  }

  private static LookupCache cache(ReadableConfig options) {
    return switch (options.get(LookupOptions.CACHE_TYPE)) {
      case NONE -> null;
      case PARTIAL -> DefaultLookupCache.fromConfig(options);
      case FULL ->
          throw new ValidationException(
              "'lookup.cache'='FULL' is not supported (as in Fluss): use NONE, so that lookups"
                  + " see the latest writes, or PARTIAL");
    };
  }

  private static List<String> split(String columns) {
    return Arrays.stream(columns.split(",")).map(String::trim).toList();
  }

  /** The index the bucket key gives (PROTOCOL.md §6.2): a strict, ordered prefix of the key. */
  boolean hasPrefixIndex() {
    List<String> physical = new ArrayList<>(primaryKey);
    physical.removeAll(partitionKeys);
    return bucketKey.size() < physical.size()
        && physical.subList(0, bucketKey.size()).equals(bucketKey);
  }

  /** The lookups of a join whose keys are the given fields of the produced (projected) row. */
  public LookupTableSource.LookupRuntimeProvider provider(int[][] keys, RowType produced) {
    LookupSpec spec = LookupSpec.of(this, keys, produced);
    if (async) {
      FluxgateAsyncLookupFunction f = new FluxgateAsyncLookupFunction(connection, spec);
      return cache == null
          ? AsyncLookupFunctionProvider.of(f)
          : PartialCachingAsyncLookupProvider.of(f, cache);
    }
    FluxgateLookupFunction f = new FluxgateLookupFunction(connection, spec);
    return cache == null ? LookupFunctionProvider.of(f) : PartialCachingLookupProvider.of(f, cache);
  }
}
