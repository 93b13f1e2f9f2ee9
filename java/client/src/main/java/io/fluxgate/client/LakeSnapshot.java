package io.fluxgate.client;

import java.util.Map;

/**
 * The result of lake-snapshot and tier-now.
 *
 * @param offsets per bucket, the next offset not yet in the lake
 * @param committedAt epoch milliseconds
 */
public record LakeSnapshot(long snapshotId, Map<Integer, Long> offsets, long committedAt) {}
