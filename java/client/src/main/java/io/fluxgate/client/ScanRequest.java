package io.fluxgate.client;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.List;

/**
 * The {"scan": ...} command of GetFlightInfo (PROTOCOL.md §4.2). Null fields take the server's
 * defaults.
 *
 * @param table "database.table", optionally with $changelog or $lake
 * @param columns projection, in this order
 * @param filter a predicate (§4.4), see {@link Predicates}
 * @param stop {@link Position#LATEST} (the default), {@link Position#UNBOUNDED} or offsets
 * @param limit the most rows in total
 * @param partitions of a partitioned table, only these (by name); null reads all
 */
public record ScanRequest(
    String table,
    List<String> columns,
    JsonNode filter,
    Position startup,
    Position stop,
    List<Integer> buckets,
    Long limit,
    Compression compression,
    List<String> partitions) {
  /** Refuses what the server refuses: each of startup and stop takes only its own forms. */
  public ScanRequest {
    if (Position.UNBOUNDED.equals(startup)) {
      throw new IllegalArgumentException(
          "startup \"none\": a scan starts at full, earliest, latest, a timestamp or offsets");
    }
    if (stop != null
        && (Position.FULL.equals(stop) || Position.EARLIEST.equals(stop) || stop.isTimestamp())) {
      throw new IllegalArgumentException(
          "stop " + stop + ": want latest, none (Position.UNBOUNDED) or offsets");
    }
  }

  public static ScanRequest of(String table) {
    return new ScanRequest(table, null, null, null, null, null, null, null, null);
  }

  public ScanRequest withColumns(String... columns) {
    return new ScanRequest(
        table, List.of(columns), filter, startup, stop, buckets, limit, compression, partitions);
  }

  public ScanRequest withFilter(JsonNode filter) {
    return new ScanRequest(
        table, columns, filter, startup, stop, buckets, limit, compression, partitions);
  }

  public ScanRequest withStartup(Position startup) {
    return new ScanRequest(
        table, columns, filter, startup, stop, buckets, limit, compression, partitions);
  }

  public ScanRequest withStop(Position stop) {
    return new ScanRequest(
        table, columns, filter, startup, stop, buckets, limit, compression, partitions);
  }

  public ScanRequest withBuckets(Integer... buckets) {
    return new ScanRequest(
        table, columns, filter, startup, stop, List.of(buckets), limit, compression, partitions);
  }

  public ScanRequest withLimit(long limit) {
    return new ScanRequest(
        table, columns, filter, startup, stop, buckets, limit, compression, partitions);
  }

  /** Reads only these partitions of a partitioned table (PROTOCOL.md §4.2). */
  public ScanRequest withPartitions(List<String> partitions) {
    return new ScanRequest(
        table,
        columns,
        filter,
        startup,
        stop,
        buckets,
        limit,
        compression,
        List.copyOf(partitions));
  }

  public ScanRequest withCompression(Compression compression) {
    return new ScanRequest(
        table, columns, filter, startup, stop, buckets, limit, compression, partitions);
  }
}
