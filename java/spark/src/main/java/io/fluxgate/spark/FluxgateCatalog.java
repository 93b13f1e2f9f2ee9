package io.fluxgate.spark;

import io.fluxgate.client.FluxgateException;
import io.fluxgate.client.TableInfo;
import io.fluxgate.client.TableSpec;
import java.util.Map;
import org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.NonEmptyNamespaceException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The server's databases and tables as a Spark catalog: with {@code
 * spark.sql.catalog.fg=io.fluxgate.spark.FluxgateCatalog} and {@code
 * spark.sql.catalog.fg.endpoint}, {@code SELECT * FROM fg.fluss.orders} reads fluss.orders and
 * {@code fg.fluss.`orders$changelog`} its changelog. CREATE TABLE makes a table (PARTITIONED BY its
 * partition keys); altering is the client's or the CLI's. The databases are its namespaces (SHOW
 * NAMESPACES IN fg, CREATE and DROP NAMESPACE).
 */
public final class FluxgateCatalog implements TableCatalog, SupportsNamespaces {
  private String name;
  private FluxgateOptions connection;

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    this.name = name;
    this.connection = FluxgateOptions.from(options);
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public Identifier[] listTables(String[] namespace) throws NoSuchNamespaceException {
    String database = database(namespace);
    try {
      return connection.call(c -> c.listTables(database)).stream()
          .map(t -> Identifier.of(namespace, shortName(t)))
          .toArray(Identifier[]::new);
    } catch (FluxgateException.NotFound e) {
      throw new NoSuchNamespaceException(namespace);
    }
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    try {
      return FluxgateTable.load(connection, database(ident.namespace()) + "." + ident.name());
    } catch (FluxgateException.NotFound | IllegalArgumentException e) {
      throw new NoSuchTableException(ident);
    }
  }

  @Override
  public void invalidateTable(Identifier ident) {}

  @Override
  public boolean dropTable(Identifier ident) {
    String table = database(ident.namespace()) + "." + ident.name();
    try {
      connection.call(
          c -> {
            c.dropTable(table, false);
            return null;
          });
      return true;
    } catch (FluxgateException.NotFound e) {
      return false;
    }
  }

  /** CREATE TABLE, with PARTITIONED BY and TBLPROPERTIES as {@link SparkTables} reads them. */
  @Override
  public Table createTable(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    String table = database(ident.namespace()) + "." + ident.name();
    TableSpec spec = SparkTables.spec(table, schema, partitions, properties);
    try {
      connection.call(c -> c.createTable(spec, false));
    } catch (FluxgateException.AlreadyExists e) {
      throw new TableAlreadyExistsException(ident);
    } catch (FluxgateException.NotFound e) {
      throw new NoSuchNamespaceException(ident.namespace());
    } catch (FluxgateException.InvalidArgument e) {
      throw new IllegalArgumentException("create " + table + ": " + e.getMessage(), e);
    }
    return FluxgateTable.load(connection, table);
  }

  @Override
  public Table alterTable(Identifier ident, TableChange... changes) {
    throw new UnsupportedOperationException(
        "fluxgate tables are altered with the client or the fluxgate CLI, not through Spark");
  }

  @Override
  public void renameTable(Identifier oldIdent, Identifier newIdent) {
    throw new UnsupportedOperationException("fluxgate tables cannot be renamed");
  }

  // ---- namespaces: the server's databases ----

  @Override
  public String[][] listNamespaces() {
    return connection.call(c -> c.listDatabases()).stream()
        .map(d -> new String[] {d})
        .toArray(String[][]::new);
  }

  /** Databases hold no namespaces. */
  @Override
  public String[][] listNamespaces(String[] namespace) throws NoSuchNamespaceException {
    if (namespace.length == 0) {
      return listNamespaces();
    }
    loadNamespaceMetadata(namespace);
    return new String[0][];
  }

  @Override
  public Map<String, String> loadNamespaceMetadata(String[] namespace)
      throws NoSuchNamespaceException {
    if (namespace.length != 1 || !connection.call(c -> c.listDatabases()).contains(namespace[0])) {
      throw new NoSuchNamespaceException(namespace);
    }
    return Map.of();
  }

  /** The owner Spark adds itself aside, a database takes no properties. */
  @Override
  public void createNamespace(String[] namespace, Map<String, String> metadata)
      throws NamespaceAlreadyExistsException {
    String database = database(namespace);
    for (String key : metadata.keySet()) {
      if (!key.equals(SupportsNamespaces.PROP_OWNER)) {
        throw new IllegalArgumentException(
            "fluxgate databases take no properties; got '" + key + "' for " + database);
      }
    }
    try {
      connection.call(
          c -> {
            c.createDatabase(database, false);
            return null;
          });
    } catch (FluxgateException.AlreadyExists e) {
      throw new NamespaceAlreadyExistsException(namespace);
    }
  }

  @Override
  public void alterNamespace(String[] namespace, NamespaceChange... changes) {
    throw new UnsupportedOperationException("fluxgate databases have nothing to alter");
  }

  @Override
  public boolean dropNamespace(String[] namespace, boolean cascade)
      throws NoSuchNamespaceException, NonEmptyNamespaceException {
    String database = database(namespace);
    try {
      connection.call(
          c -> {
            c.dropDatabase(database, false, cascade);
            return null;
          });
      return true;
    } catch (FluxgateException.NotFound e) {
      throw new NoSuchNamespaceException(namespace);
    } catch (FluxgateException.FailedPrecondition e) {
      throw new NonEmptyNamespaceException(namespace);
    }
  }

  /** The fluxgate database of a Spark namespace, which is exactly one name. */
  private static String database(String[] namespace) {
    if (namespace.length != 1) {
      throw new IllegalArgumentException(
          "a fluxgate table is catalog.database.table; got namespace "
              + String.join(".", namespace));
    }
    return namespace[0];
  }

  private static String shortName(TableInfo t) {
    return t.table().substring(t.table().indexOf('.') + 1);
  }
}
