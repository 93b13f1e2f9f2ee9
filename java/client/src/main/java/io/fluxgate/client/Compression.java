package io.fluxgate.client;

import com.fasterxml.jackson.annotation.JsonValue;

/** Arrow IPC buffer compression of the batches on the wire. */
public enum Compression {
  NONE("none"),
  LZ4_FRAME("lz4_frame"),
  /** On a ZSTD table (the default), scans send the stored batches as they are. */
  ZSTD("zstd");

  private final String wire;

  Compression(String wire) {
    this.wire = wire;
  }

  @JsonValue
  public String wire() {
    return wire;
  }
}
