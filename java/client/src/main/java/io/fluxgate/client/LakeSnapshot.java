package io.fluxgate.client;

import java.util.Map;

/**
 * The result of lake-snapshot and tier-now.
 *
 * @param offsets per bucket, the next offset not yet in the lake; empty on a partitioned table
 * @param partitionOffsets on a partitioned table, the same per partition name
 * @param committedAt epoch milliseconds
 */
public record LakeSnapshot(
    long snapshotId,
    Map<Integer, Long> offsets,
    Map<String, Map<Integer, Long>> partitionOffsets,
    long committedAt) {}
