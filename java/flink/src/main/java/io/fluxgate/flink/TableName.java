package io.fluxgate.flink;

import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.ObjectPath;

/**
 * A table as Flink names it: "database.table", perhaps with a view suffix ($changelog, $lake).
 *
 * @param view null for the table itself
 */
public record TableName(String database, String table, View view) {
  /** The readable views of a table (PROTOCOL.md §4.5). */
  public enum View {
    CHANGELOG("$changelog"),
    LAKE("$lake");

    public final String suffix;

    View(String suffix) {
      this.suffix = suffix;
    }
  }

  public static TableName of(ObjectPath path) {
    return of(path.getDatabaseName(), path.getObjectName());
  }

  public static TableName of(String database, String name) {
    int dollar = name.indexOf('$');
    if (dollar < 0) {
      return new TableName(database, name, null);
    }
    String suffix = name.substring(dollar);
    for (View v : View.values()) {
      if (v.suffix.equals(suffix)) {
        return new TableName(database, name.substring(0, dollar), v);
      }
    }
    throw new ValidationException(
        "table " + name + ": unknown view " + suffix + " (fluxgate has $changelog and $lake)");
  }

  /** "database.table", the table without its view. */
  public String base() {
    return database + "." + table;
  }

  /** The name to scan: with the view suffix. */
  public String scanned() {
    return view == null ? base() : base() + view.suffix;
  }

  /** The table to write or change; views are read-only. */
  public String writable() {
    if (view != null) {
      throw new ValidationException(scanned() + " is a read-only view of " + base());
    }
    return base();
  }
}
