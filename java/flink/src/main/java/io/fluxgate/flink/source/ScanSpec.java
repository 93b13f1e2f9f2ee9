package io.fluxgate.flink.source;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fluxgate.client.Compression;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.LookupRequest;
import io.fluxgate.client.Position;
import io.fluxgate.client.Predicates;
import io.fluxgate.client.ScanPlan;
import io.fluxgate.client.ScanRequest;
import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What a source scans, shipped with the job: the serializable form of a {@link ScanRequest}.
 *
 * @param columns the projection, null for every column
 * @param filter a predicate as JSON (PROTOCOL.md §4.4), null for none
 * @param startup "full", "earliest", "latest" or null (the server's default for the table)
 * @param startupTimestamp epoch milliseconds, instead of startup
 * @param changelog whether rows begin with _change_type, which becomes their RowKind
 * @param keyColumns the primary key, read beside the projection (a snapshot resumes after the last
 *     key emitted, see {@link BucketSplit}); empty where no snapshot is read; null for a full read
 *     of a $changelog view, which declares no key: its table's, found when planning ({@link
 *     #keyed})
 * @param lookupKey a point lookup's key (see {@link PointLookup}) instead of a scan, or null
 * @param partitioned whether the table is partitioned (it may have no partition yet)
 * @param partitions the partitions to read, by name, when the planner pruned them; null: all
 * @param discoveryMillis how often an unbounded read of a partitioned table looks for new
 *     partitions; zero or less: never
 */
public record ScanSpec(
    String table,
    List<String> columns,
    String filter,
    String startup,
    Long startupTimestamp,
    boolean bounded,
    Long limit,
    boolean changelog,
    List<String> keyColumns,
    String lookupKey,
    boolean partitioned,
    List<String> partitions,
    long discoveryMillis)
    implements Serializable {

  /** A point lookup's plan: one ticket whose rows begin with _key_index. */
  ScanPlan planLookup(FluxgateClient client) {
    Map<String, Object> key = new LinkedHashMap<>();
    Predicates.parse(lookupKey).fields().forEachRemaining(f -> key.put(f.getKey(), f.getValue()));
    return client.planLookup(
        LookupRequest.of(table).withColumns(columns.toArray(String[]::new)), List.of(key));
  }

  /** This spec with its key columns known: a $changelog view's are its table's primary key. */
  ScanSpec keyed(FluxgateClient client) {
    if (keyColumns != null) {
      return this;
    }
    List<String> key = client.describeTable(baseTable()).primaryKey();
    return new ScanSpec(
        table,
        columns,
        filter,
        startup,
        startupTimestamp,
        bounded,
        limit,
        changelog,
        key == null ? List.of() : key,
        lookupKey,
        partitioned,
        partitions,
        discoveryMillis);
  }

  /** The table read, without the view a name like "db.t$changelog" reads. */
  String baseTable() {
    int view = table.indexOf('$');
    return view < 0 ? table : table.substring(0, view);
  }

  /** Whether the enumerator looks for partitions created after the scan was planned. */
  boolean discovers() {
    return partitioned && !bounded && partitions == null && discoveryMillis > 0;
  }

  /** How many columns come before the produced ones: _change_type, or a lookup's _key_index. */
  int leadingColumns() {
    return changelog || lookupKey != null ? 1 : 0;
  }

  /** The columns read: the projection, then the key columns it lacks. */
  List<String> readColumns() {
    List<String> read = new ArrayList<>(columns);
    keyColumns.stream().filter(k -> !read.contains(k)).forEach(read::add);
    return read;
  }

  ScanRequest request() {
    ScanRequest r =
        ScanRequest.of(table)
            .withStop(bounded ? Position.LATEST : Position.UNBOUNDED)
            // Batches as the log stores them: the server sends ZSTD blocks without recompressing.
            .withCompression(Compression.ZSTD);
    if (columns != null) {
      r = r.withColumns(readColumns().toArray(String[]::new));
    }
    if (filter != null) {
      try {
        r = r.withFilter(new ObjectMapper().readTree(filter));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    if (startupTimestamp != null) {
      r = r.withStartup(Position.atTimestamp(startupTimestamp));
    } else if (startup != null) {
      r =
          r.withStartup(
              switch (startup) {
                case "full" -> Position.FULL;
                case "earliest" -> Position.EARLIEST;
                case "latest" -> Position.LATEST;
                default -> throw new IllegalArgumentException("startup " + startup);
              });
    }
    if (limit != null) {
      r = r.withLimit(limit);
    }
    if (partitions != null) {
      r = r.withPartitions(partitions);
    }
    return r;
  }
}
