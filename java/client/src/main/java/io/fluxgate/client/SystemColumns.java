package io.fluxgate.client;

import java.util.List;

/**
 * The system columns (Go: package protocol, columns.go): names a table's columns may not take,
 * because views, lake tables, writes and lookup answers add them. schema.json lists them under
 * "systemColumns", which a test compares with {@link #ALL}.
 */
public final class SystemColumns {
  private SystemColumns() {}

  /** The t$changelog view's columns, before the table's; a changelog write's batches carry it. */
  public static final String CHANGE_TYPE = "_change_type";

  public static final String LOG_OFFSET = "_log_offset";
  public static final String COMMIT_TIMESTAMP = "_commit_timestamp";

  /** The columns every lake table (and t$lake) ends with. */
  public static final String BUCKET = "__bucket";

  public static final String OFFSET = "__offset";
  public static final String TIMESTAMP = "__timestamp";

  /** The first column of every lookup answer: the key's row in the key batch. */
  public static final String KEY_INDEX = "_key_index";

  /** All of them, in protocol's order. */
  public static final List<String> ALL =
      List.of(CHANGE_TYPE, LOG_OFFSET, COMMIT_TIMESTAMP, BUCKET, OFFSET, TIMESTAMP, KEY_INDEX);
}
