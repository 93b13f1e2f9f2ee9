package io.fluxgate.client;

import java.util.Map;

/**
 * The acknowledgement of one written batch (PROTOCOL.md §5): all of its rows are applied, durable
 * and visible.
 *
 * @param sequence first_sequence + i with a writer id, else the stream's batch count from 0
 * @param buckets each bucket the batch touched, with its log end offset after the batch; empty on a
 *     partitioned table
 * @param partitionOffsets on a partitioned table, the same per partition name
 */
public record PutResult(
    long sequence,
    long rows,
    Map<Integer, Long> buckets,
    Map<String, Map<Integer, Long>> partitionOffsets) {}
