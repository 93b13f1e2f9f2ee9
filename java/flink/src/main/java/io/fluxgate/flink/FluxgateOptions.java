package io.fluxgate.flink;

import io.fluxgate.client.ConnectionSettings;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.connector.source.lookup.LookupOptions;

/** The options of the catalog, the table factory, the source and the sink. */
public final class FluxgateOptions {
  private FluxgateOptions() {}

  public static final String IDENTIFIER = "fluxgate";

  // ---- connection (catalog and 'connector'='fluxgate' tables) ----

  public static final ConfigOption<String> ENDPOINT =
      ConfigOptions.key(ConnectionSettings.ENDPOINT)
          .stringType()
          .noDefaultValue()
          .withDescription(
              "The server: grpc://host:port, grpc+tls://host:port or host:port (TLS when tls"
                  + " files are given; a grpc:// address with them is refused).");

  public static final ConfigOption<String> DEFAULT_DATABASE =
      ConfigOptions.key("default-database")
          .stringType()
          .defaultValue("fluss")
          .withDescription("The catalog's current database at start.");

  public static final ConfigOption<String> USERNAME =
      ConfigOptions.key(ConnectionSettings.USERNAME).stringType().noDefaultValue();

  public static final ConfigOption<String> PASSWORD =
      ConfigOptions.key(ConnectionSettings.PASSWORD).stringType().noDefaultValue();

  public static final ConfigOption<String> TOKEN =
      ConfigOptions.key(ConnectionSettings.TOKEN)
          .stringType()
          .noDefaultValue()
          .withDescription("A static API token, instead of username and password.");

  public static final ConfigOption<String> TLS_CA_FILE =
      ConfigOptions.key(ConnectionSettings.TLS_CA_FILE)
          .stringType()
          .noDefaultValue()
          .withDescription("PEM CA certificates to verify the server with.");

  public static final ConfigOption<String> TLS_CERT_FILE =
      ConfigOptions.key(ConnectionSettings.TLS_CERT_FILE)
          .stringType()
          .noDefaultValue()
          .withDescription("A client certificate (PEM) for mutual TLS, with tls.key-file.");

  public static final ConfigOption<String> TLS_KEY_FILE =
      ConfigOptions.key(ConnectionSettings.TLS_KEY_FILE)
          .stringType()
          .noDefaultValue()
          .withDescription("The client certificate's PKCS#8 PEM key.");

  /** 'connector'='fluxgate' tables name their fluxgate table; by default the Flink one's. */
  public static final ConfigOption<String> TABLE =
      ConfigOptions.key("table")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "database.table on the server, for tables declared outside the catalog.");

  // ---- source ----

  /** Fluss's scan.startup.mode. */
  public enum StartupMode {
    FULL,
    EARLIEST,
    LATEST,
    TIMESTAMP
  }

  public static final ConfigOption<StartupMode> SCAN_STARTUP_MODE =
      ConfigOptions.key("scan.startup.mode")
          .enumType(StartupMode.class)
          .defaultValue(StartupMode.FULL)
          .withDescription(
              "full: current rows then changes (a union read on lake tables); earliest, latest,"
                  + " timestamp: the log from there.");

  public static final ConfigOption<String> SCAN_STARTUP_TIMESTAMP =
      ConfigOptions.key("scan.startup.timestamp")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "For scan.startup.mode=timestamp: epoch milliseconds, or 'yyyy-MM-dd HH:mm:ss' in"
                  + " the session time zone (table.local-time-zone).");

  public static final ConfigOption<Duration> SCAN_PARTITION_DISCOVERY_INTERVAL =
      ConfigOptions.key("scan.partition.discovery.interval")
          .durationType()
          .defaultValue(Duration.ofMinutes(1))
          .withDescription(
              "How often a streaming read of a partitioned table looks for new partitions, which it"
                  + " reads from their earliest offset; zero or negative: never.");

  // ---- sink ----

  public static final ConfigOption<Boolean> SINK_IGNORE_DELETE =
      ConfigOptions.key("sink.ignore-delete")
          .booleanType()
          .defaultValue(false)
          .withDescription("Drop DELETE rows instead of deleting their keys.");

  public static final ConfigOption<Boolean> SINK_CREATE_PARTITIONS =
      ConfigOptions.key("client.writer.dynamic-create-partition.enabled")
          .booleanType()
          .defaultValue(true)
          .withDescription(
              "Rows of a partition that does not exist create it; false fails the write (NOT_FOUND"
                  + " naming the partition).");

  // ---- lookups (lookup joins, the dictionary, delta joins) ----

  public static final ConfigOption<Boolean> LOOKUP_ASYNC =
      ConfigOptions.key("lookup.async")
          .booleanType()
          .defaultValue(true)
          .withDescription(
              "Asynchronous lookups: keys of many rows share DoExchange batches, several in"
                  + " flight. false: one key per request, on the task thread.");

  public static final ConfigOption<Boolean> LOOKUP_INSERT_IF_NOT_EXISTS =
      ConfigOptions.key("lookup.insert-if-not-exists")
          .booleanType()
          .defaultValue(false)
          .withDescription(
              "A key the lookup misses is inserted (key, NULLs, new auto-increment id) and"
                  + " returned: the global dictionary (PROTOCOL.md §6.3).");

  /** lookup.cache (NONE or PARTIAL), lookup.max-retries and Flink's lookup.partial-cache.*. */
  static final List<ConfigOption<?>> LOOKUP =
      List.of(
          LOOKUP_ASYNC,
          LOOKUP_INSERT_IF_NOT_EXISTS,
          LookupOptions.CACHE_TYPE,
          LookupOptions.MAX_RETRIES,
          LookupOptions.PARTIAL_CACHE_EXPIRE_AFTER_ACCESS,
          LookupOptions.PARTIAL_CACHE_EXPIRE_AFTER_WRITE,
          LookupOptions.PARTIAL_CACHE_CACHE_MISSING_KEY,
          LookupOptions.PARTIAL_CACHE_MAX_ROWS);

  // ---- sink: distribution, undo recovery (FluxgateTableSink) ----

  /** Fluss's sink.distribution-mode. */
  public enum DistributionMode {
    NONE,
    AUTO,
    BUCKET,
    PARTITION_DYNAMIC
  }

  public static final ConfigOption<DistributionMode> SINK_DISTRIBUTION_MODE =
      ConfigOptions.key("sink.distribution-mode")
          .enumType(DistributionMode.class)
          .defaultValue(DistributionMode.AUTO)
          .withDescription(
              "BUCKET: rows go through the subtask of their bucket, so one key always through one"
                  + " subtask; NONE: Flink's default; AUTO: BUCKET for primary-key tables and log"
                  + " tables with a bucket key, else NONE.");

  public static final ConfigOption<String> SINK_PRODUCER_ID =
      ConfigOptions.key("sink.producer-id")
          .stringType()
          .noDefaultValue()
          .withDescription(
              "The id undo recovery registers its starting offsets under; the Flink job id if"
                  + " unset.");

  public static final ConfigOption<Boolean> SINK_UNDO_RECOVERY =
      ConfigOptions.key("sink.undo-recovery")
          .booleanType()
          .defaultValue(true)
          .withDescription(
              "Exactly-once into aggregation tables: on restore, undo what was written after the"
                  + " checkpoint. false leaves them at-least-once.");

  static final List<ConfigOption<?>> SINK =
      List.of(SINK_DISTRIBUTION_MODE, SINK_PRODUCER_ID, SINK_UNDO_RECOVERY);

  /** Connection options: never stored as table options on the server. */
  public static final List<ConfigOption<?>> CONNECTION =
      List.of(
          ENDPOINT,
          DEFAULT_DATABASE,
          USERNAME,
          PASSWORD,
          TOKEN,
          TLS_CA_FILE,
          TLS_CERT_FILE,
          TLS_KEY_FILE);

  /** Options a query may set (in hints or a 'connector' table) that the server does not store. */
  static final List<ConfigOption<?>> READ_WRITE =
      List.of(
          SCAN_STARTUP_MODE,
          SCAN_STARTUP_TIMESTAMP,
          SCAN_PARTITION_DISCOVERY_INTERVAL,
          SINK_IGNORE_DELETE,
          SINK_CREATE_PARTITIONS);

  /** Exact storage options of fluxgate tables (PROTOCOL.md §2), passed one to one. */
  static final Set<String> STORAGE_KEYS =
      Set.of("bucket.num", "bucket.key", "auto-increment.fields");

  /** Prefixes of storage options (table.log.*, fields.<col>.agg, iceberg.* ...). */
  static final List<String> STORAGE_PREFIXES = List.of("table.", "fields.", "iceberg.");

  /** Per-query client tuning, accepted in hints and ignored where nothing reads it. */
  static final String CLIENT_PREFIX = "client.";

  /** The connection settings of config, read by the client's keys. */
  public static ConnectionSettings connection(ReadableConfig config) {
    return ConnectionSettings.from(
        key ->
            config.getOptional(ConfigOptions.key(key).stringType().noDefaultValue()).orElse(null),
        null);
  }

  static boolean isStorageOption(String key) {
    return STORAGE_KEYS.contains(key) || STORAGE_PREFIXES.stream().anyMatch(key::startsWith);
  }
}
