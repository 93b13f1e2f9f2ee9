package io.fluxgate.flink.source;

import io.fluxgate.flink.FluxgateOptions;
import java.time.DateTimeException;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.api.config.TableConfigOptions;

/**
 * scan.startup.timestamp as Fluss reads it: epoch milliseconds (all digits), or {@code yyyy-MM-dd
 * HH:mm:ss} in the session time zone ({@code table.local-time-zone}, the JVM's by default).
 */
public final class StartupTimestamp {
  private static final DateTimeFormatter LOCAL = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

  private StartupTimestamp() {}

  /** The option's epoch milliseconds, or null when it is not set. */
  public static Long of(ReadableConfig options, ReadableConfig session) {
    return options
        .getOptional(FluxgateOptions.SCAN_STARTUP_TIMESTAMP)
        .map(value -> parse(value, sessionZone(session)))
        .orElse(null);
  }

  static long parse(String value, ZoneId zone) {
    String v = value.trim();
    try {
      if (v.matches("\\d+")) {
        return Long.parseLong(v);
      }
      return LocalDateTime.parse(v, LOCAL).atZone(zone).toInstant().toEpochMilli();
    } catch (DateTimeException | NumberFormatException e) {
      throw new ValidationException(
          "'"
              + FluxgateOptions.SCAN_STARTUP_TIMESTAMP.key()
              + "' is epoch milliseconds or 'yyyy-MM-dd HH:mm:ss' in the session time zone ("
              + zone
              + "), such as '1678883047356' or '2023-12-09 23:09:12'; got '"
              + value
              + "'",
          e);
    }
  }

  /** table.local-time-zone; its default, "default", is the JVM's zone (as in Flink and Fluss). */
  static ZoneId sessionZone(ReadableConfig session) {
    String zone = session.get(TableConfigOptions.LOCAL_TIME_ZONE);
    return TableConfigOptions.LOCAL_TIME_ZONE.defaultValue().equals(zone)
        ? ZoneId.systemDefault()
        : ZoneId.of(zone);
  }
}
