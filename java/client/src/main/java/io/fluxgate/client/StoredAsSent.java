package io.fluxgate.client;

/**
 * The compression in which the server stores a table's batches as it receives them, without
 * compressing them again (PROTOCOL.md §5): a log table's codec, ZSTD or LZ4 frame. Primary-key
 * tables store changelogs the server encodes, so a batch compressed for them would only be
 * decompressed on arrival.
 */
final class StoredAsSent {
  static final String OPT_CODEC = "table.log.arrow.compression.type";
  static final String OPT_ZSTD_LEVEL = "table.log.arrow.compression.zstd.level";

  private StoredAsSent() {}

  static Compression compression(TableInfo info) {
    if (info.hasPrimaryKey()) {
      return Compression.NONE;
    }
    return switch (info.options().getOrDefault(OPT_CODEC, "zstd")) {
      case "zstd" -> Compression.ZSTD;
      case "lz4_frame" -> Compression.LZ4_FRAME;
      default -> Compression.NONE;
    };
  }

  static int zstdLevel(TableInfo info) {
    String level = info.options().get(OPT_ZSTD_LEVEL);
    return level == null ? IpcEncoder.DEFAULT_ZSTD_LEVEL : Integer.parseInt(level);
  }
}
