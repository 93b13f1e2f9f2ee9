package io.fluxgate.client;

/**
 * The compression a writer sends a table's batches with by default: ZSTD for a log table compressed
 * with ZSTD, which the server stores as received, without compressing them again (PROTOCOL.md §5);
 * else none. An LZ4 log table stores LZ4 batches as received too, but Arrow Java's LZ4 codec
 * (commons-compress, pure Java) compresses tens of times slower than the server's, so its batches
 * go uncompressed (docs/benchmarks.md, "Peer: NATS JetStream"). Primary-key tables store changelogs
 * the server encodes, so a batch compressed for them would only be decompressed on arrival.
 */
final class StoredAsSent {
  static final String OPT_CODEC = "table.log.arrow.compression.type";
  static final String OPT_ZSTD_LEVEL = "table.log.arrow.compression.zstd.level";

  private StoredAsSent() {}

  static Compression compression(TableInfo info) {
    if (info.hasPrimaryKey()) {
      return Compression.NONE;
    }
    return "zstd".equals(info.options().getOrDefault(OPT_CODEC, "zstd"))
        ? Compression.ZSTD
        : Compression.NONE;
  }

  static int zstdLevel(TableInfo info) {
    String level = info.options().get(OPT_ZSTD_LEVEL);
    return level == null ? IpcEncoder.DEFAULT_ZSTD_LEVEL : Integer.parseInt(level);
  }
}
