package io.fluxgate.client;

import java.util.Map;

/**
 * The answer of table-stats (PROTOCOL.md §3): a table's rows, counted without reading them.
 *
 * @param rowCount the rows in all: a primary-key table's current rows, a log table's retained ones
 * @param buckets the rows of each bucket; null for a partitioned table
 * @param partitions a partitioned table's rows per partition asked, by name; null for others
 */
public record TableStats(
    long rowCount, Map<Integer, Long> buckets, Map<String, Partition> partitions) {

  /** A partition's rows, in all and per bucket. */
  public record Partition(long rowCount, Map<Integer, Long> buckets) {}
}
