package io.fluxgate.client;

/**
 * The app_metadata of a scan's FlightInfo.
 *
 * @param lakeSnapshotId the lake snapshot of a union or lake read, else null
 */
public record PlanMeta(long tableId, long schemaId, int buckets, Long lakeSnapshotId) {}
