package io.fluxgate.client;

import java.util.Map;

/**
 * One partition of a partitioned table: one value per partition key (PROTOCOL.md §3).
 *
 * @param partitionId new each time a partition of this name is created
 * @param partitionName the values joined by '$' in partition-key order, e.g. "20261201$eu"
 * @param spec each partition key's value, as a string
 */
public record PartitionInfo(long partitionId, String partitionName, Map<String, String> spec) {}
