package io.fluxgate.client;

import java.util.List;

/**
 * The app_metadata of a scan's FlightInfo.
 *
 * @param lakeSnapshotId the lake snapshot of a union or lake read, else null
 * @param partitions the partitions planned, in name order, on a partitioned table; else empty
 */
public record PlanMeta(
    long tableId, long schemaId, int buckets, Long lakeSnapshotId, List<PartitionInfo> partitions) {
  public PlanMeta {
    partitions = partitions == null ? List.of() : List.copyOf(partitions);
  }
}
