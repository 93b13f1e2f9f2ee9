package io.fluxgate.client;

import java.util.Map;

/**
 * The result of undo (PROTOCOL.md §5.4).
 *
 * @param undoneKeys keys restored or deleted
 * @param offsets each bucket's log end offset after the undo
 */
public record UndoResult(long undoneKeys, Map<Integer, Long> offsets) {}
