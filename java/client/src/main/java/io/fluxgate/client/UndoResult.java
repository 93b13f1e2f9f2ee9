package io.fluxgate.client;

import java.util.Map;

/**
 * The result of undo (PROTOCOL.md §5.4).
 *
 * @param undoneKeys keys restored or deleted
 * @param offsets each bucket's log end offset after the undo; empty on a partitioned table
 * @param partitionOffsets on a partitioned table, the same per partition name
 */
public record UndoResult(
    long undoneKeys,
    Map<Integer, Long> offsets,
    Map<String, Map<Integer, Long>> partitionOffsets) {}
