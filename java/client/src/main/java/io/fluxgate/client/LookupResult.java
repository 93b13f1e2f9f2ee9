package io.fluxgate.client;

import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * One lookup answer: _key_index (INT32, the key's row in the key batch) and the requested columns,
 * rows ascending by _key_index, keys without a match absent. The caller closes it.
 */
public record LookupResult(VectorSchemaRoot rows, LookupMeta meta) implements AutoCloseable {
  @Override
  public void close() {
    rows.close();
  }
}
