package io.fluxgate.client;

/**
 * The app_metadata of a lookup answer: keys in the request batch, rows in the whole answer. An
 * answer over 4 MiB comes in several messages, each with this metadata and {@code more} on all but
 * the last (PROTOCOL.md §6.1); the {@link Lookuper} joins them, so the answers it returns never
 * have {@code more}.
 */
public record LookupMeta(int keys, int rows, boolean more) {
  /** The metadata of a whole answer. */
  public LookupMeta(int keys, int rows) {
    this(keys, rows, false);
  }
}
