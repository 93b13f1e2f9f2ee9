package io.fluxgate.client;

/**
 * The app_metadata of a record batch in a scan (PROTOCOL.md §4.3).
 *
 * @param next the offset to resume this bucket from after this batch: what a connector stores in
 *     its checkpoint, never a row count
 * @param partitionId the batch's partition on a partitioned table, else null
 * @param partition that partition's name, else null
 * @param snapshot true on the batches of a snapshot (a primary-key table's current rows), which a
 *     read cannot resume inside; else null
 */
public record BatchMeta(
    int bucket,
    long start,
    long next,
    long highWatermark,
    Long partitionId,
    String partition,
    Boolean snapshot) {}
