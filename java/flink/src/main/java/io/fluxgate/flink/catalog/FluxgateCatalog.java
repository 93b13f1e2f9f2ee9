package io.fluxgate.flink.catalog;

import io.fluxgate.client.AlterRequest;
import io.fluxgate.client.Column;
import io.fluxgate.client.ConnectionSettings;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.FluxgateException;
import io.fluxgate.client.PartitionInfo;
import io.fluxgate.client.TableInfo;
import io.fluxgate.client.TableSpec;
import io.fluxgate.flink.FluxgateTableFactory;
import io.fluxgate.flink.FluxgateTables;
import io.fluxgate.flink.TableName;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.AbstractCatalog;
import org.apache.flink.table.catalog.CatalogBaseTable;
import org.apache.flink.table.catalog.CatalogDatabase;
import org.apache.flink.table.catalog.CatalogDatabaseImpl;
import org.apache.flink.table.catalog.CatalogFunction;
import org.apache.flink.table.catalog.CatalogFunctionImpl;
import org.apache.flink.table.catalog.CatalogPartition;
import org.apache.flink.table.catalog.CatalogPartitionImpl;
import org.apache.flink.table.catalog.CatalogPartitionSpec;
import org.apache.flink.table.catalog.FunctionLanguage;
import org.apache.flink.table.catalog.ObjectPath;
import org.apache.flink.table.catalog.ResolvedCatalogTable;
import org.apache.flink.table.catalog.TableChange;
import org.apache.flink.table.catalog.exceptions.CatalogException;
import org.apache.flink.table.catalog.exceptions.DatabaseAlreadyExistException;
import org.apache.flink.table.catalog.exceptions.DatabaseNotEmptyException;
import org.apache.flink.table.catalog.exceptions.DatabaseNotExistException;
import org.apache.flink.table.catalog.exceptions.FunctionNotExistException;
import org.apache.flink.table.catalog.exceptions.PartitionAlreadyExistsException;
import org.apache.flink.table.catalog.exceptions.PartitionNotExistException;
import org.apache.flink.table.catalog.exceptions.PartitionSpecInvalidException;
import org.apache.flink.table.catalog.exceptions.TableAlreadyExistException;
import org.apache.flink.table.catalog.exceptions.TableNotExistException;
import org.apache.flink.table.catalog.exceptions.TableNotPartitionedException;
import org.apache.flink.table.catalog.stats.CatalogColumnStatistics;
import org.apache.flink.table.catalog.stats.CatalogTableStatistics;
import org.apache.flink.table.expressions.Expression;
import org.apache.flink.table.factories.Factory;

/**
 * A Flink catalog over a fluxgate server: its databases and tables, with {@code t$changelog} and
 * {@code t$lake} resolving as tables, and the partitions of PARTITIONED BY tables. Functions, views
 * and statistics are not fluxgate's: listed empty, refused when written.
 */
public final class FluxgateCatalog extends AbstractCatalog {
  private final ConnectionSettings connection;
  private FluxgateClient client;

  public FluxgateCatalog(String name, String defaultDatabase, ConnectionSettings connection) {
    super(name, defaultDatabase);
    this.connection = connection;
  }

  @Override
  public void open() {
    try {
      client = connection.connect();
      client.listDatabases(); // fail at CREATE CATALOG, not at the first query
    } catch (FluxgateException | IllegalArgumentException e) {
      close();
      throw new CatalogException(
          "fluxgate catalog "
              + getName()
              + ": cannot connect to "
              + connection
              + ": "
              + e.getMessage(),
          e);
    }
  }

  @Override
  public void close() {
    if (client != null) {
      client.close();
      client = null;
    }
  }

  @Override
  public Optional<Factory> getFactory() {
    return Optional.of(new FluxgateTableFactory(connection));
  }

  // ---- databases ----

  @Override
  public List<String> listDatabases() {
    return call(() -> client.listDatabases());
  }

  @Override
  public CatalogDatabase getDatabase(String name) throws DatabaseNotExistException {
    if (!databaseExists(name)) {
      throw new DatabaseNotExistException(getName(), name);
    }
    return new CatalogDatabaseImpl(Map.of(), null);
  }

  @Override
  public boolean databaseExists(String name) {
    return listDatabases().contains(name);
  }

  @Override
  public void createDatabase(String name, CatalogDatabase db, boolean ignoreIfExists)
      throws DatabaseAlreadyExistException {
    if (!db.getProperties().isEmpty()) {
      throw new ValidationException(
          "fluxgate databases take no options, got " + db.getProperties().keySet());
    }
    try {
      client.createDatabase(name, ignoreIfExists);
    } catch (FluxgateException.AlreadyExists e) {
      throw new DatabaseAlreadyExistException(getName(), name, e);
    } catch (FluxgateException e) {
      throw catalogError("create database " + name, e);
    }
  }

  @Override
  public void dropDatabase(String name, boolean ignoreIfNotExists, boolean cascade)
      throws DatabaseNotExistException, DatabaseNotEmptyException {
    try {
      client.dropDatabase(name, ignoreIfNotExists, cascade);
    } catch (FluxgateException.NotFound e) {
      throw new DatabaseNotExistException(getName(), name, e);
    } catch (FluxgateException.FailedPrecondition e) {
      throw new DatabaseNotEmptyException(getName(), name, e);
    } catch (FluxgateException e) {
      throw catalogError("drop database " + name, e);
    }
  }

  @Override
  public void alterDatabase(String name, CatalogDatabase db, boolean ignoreIfNotExists) {
    throw new UnsupportedOperationException("fluxgate databases have nothing to alter");
  }

  // ---- tables ----

  @Override
  public List<String> listTables(String database) throws DatabaseNotExistException {
    if (!databaseExists(database)) {
      throw new DatabaseNotExistException(getName(), database);
    }
    List<String> names = new ArrayList<>();
    for (TableInfo t : call(() -> client.listTables(database))) {
      names.add(t.table().substring(t.table().indexOf('.') + 1));
    }
    Collections.sort(names);
    return names;
  }

  @Override
  public List<String> listViews(String database) {
    return List.of();
  }

  @Override
  public CatalogBaseTable getTable(ObjectPath path) throws TableNotExistException {
    TableName name = TableName.of(path);
    TableInfo info;
    try {
      info = client.describeTable(name.base());
    } catch (FluxgateException.NotFound e) {
      throw new TableNotExistException(getName(), path, e);
    } catch (FluxgateException e) {
      throw catalogError("describe " + name.base(), e);
    }
    return FluxgateTables.toFlink(info, name.view());
  }

  @Override
  public boolean tableExists(ObjectPath path) {
    try {
      getTable(path);
      return true;
    } catch (TableNotExistException e) {
      return false;
    }
  }

  @Override
  public void dropTable(ObjectPath path, boolean ignoreIfNotExists) throws TableNotExistException {
    try {
      client.dropTable(TableName.of(path).writable(), ignoreIfNotExists);
    } catch (FluxgateException.NotFound e) {
      throw new TableNotExistException(getName(), path, e);
    } catch (FluxgateException e) {
      throw catalogError("drop table " + path, e);
    }
  }

  @Override
  public void renameTable(ObjectPath path, String newName, boolean ignoreIfNotExists) {
    throw new UnsupportedOperationException("fluxgate tables cannot be renamed");
  }

  @Override
  public void createTable(ObjectPath path, CatalogBaseTable table, boolean ignoreIfExists)
      throws TableAlreadyExistException, DatabaseNotExistException {
    if (!(table instanceof ResolvedCatalogTable resolved)) {
      throw new ValidationException("fluxgate stores tables, not views: " + path);
    }
    TableSpec spec = FluxgateTables.toSpec(TableName.of(path).writable(), resolved);
    try {
      client.createTable(spec, ignoreIfExists);
    } catch (FluxgateException.AlreadyExists e) {
      throw new TableAlreadyExistException(getName(), path, e);
    } catch (FluxgateException.NotFound e) {
      throw new DatabaseNotExistException(getName(), path.getDatabaseName(), e);
    } catch (FluxgateException.InvalidArgument e) {
      throw new ValidationException("create table " + path + ": " + e.getMessage(), e);
    } catch (FluxgateException e) {
      throw catalogError("create table " + path, e);
    }
  }

  @Override
  public void alterTable(ObjectPath path, CatalogBaseTable newTable, boolean ignoreIfNotExists) {
    throw new UnsupportedOperationException(
        "fluxgate alters tables by change (ALTER TABLE ... ADD / SET / RESET)");
  }

  @Override
  public void alterTable(
      ObjectPath path,
      CatalogBaseTable newTable,
      List<TableChange> changes,
      boolean ignoreIfNotExists)
      throws TableNotExistException {
    String table = TableName.of(path).writable();
    Map<String, String> set = new LinkedHashMap<>();
    List<String> reset = new ArrayList<>();
    List<Column> add = new ArrayList<>();
    for (TableChange change : changes) {
      if (change instanceof TableChange.SetOption s) {
        set.put(s.getKey(), s.getValue());
      } else if (change instanceof TableChange.ResetOption r) {
        reset.add(r.getKey());
      } else if (change instanceof TableChange.AddColumn a) {
        if (a.getPosition() != null) {
          throw new ValidationException("fluxgate adds columns last only: " + a.getColumn());
        }
        add.add(FluxgateTables.toColumn(a.getColumn()));
      } else {
        throw new ValidationException("fluxgate cannot alter a table by " + change);
      }
    }
    try {
      client.alterTable(new AlterRequest(table, set, reset, add));
    } catch (FluxgateException.NotFound e) {
      if (!ignoreIfNotExists) {
        throw new TableNotExistException(getName(), path, e);
      }
    } catch (FluxgateException.InvalidArgument | FluxgateException.FailedPrecondition e) {
      throw new ValidationException("alter table " + path + ": " + e.getMessage(), e);
    } catch (FluxgateException e) {
      throw catalogError("alter table " + path, e);
    }
  }

  // ---- partitions (PARTITIONED BY tables: SHOW PARTITIONS, ALTER TABLE ... ADD/DROP PARTITION)
  // ----

  @Override
  public List<CatalogPartitionSpec> listPartitions(ObjectPath path)
      throws TableNotExistException, TableNotPartitionedException {
    return listPartitions(path, new CatalogPartitionSpec(Map.of()));
  }

  @Override
  public List<CatalogPartitionSpec> listPartitions(ObjectPath path, CatalogPartitionSpec spec)
      throws TableNotExistException, TableNotPartitionedException {
    String table = TableName.of(path).writable();
    try {
      List<CatalogPartitionSpec> out = new ArrayList<>();
      for (PartitionInfo p : client.listPartitions(table, spec.getPartitionSpec())) {
        out.add(new CatalogPartitionSpec(new LinkedHashMap<>(p.spec())));
      }
      return out;
    } catch (FluxgateException.NotFound e) {
      throw new TableNotExistException(getName(), path, e);
    } catch (FluxgateException.FailedPrecondition e) {
      throw new TableNotPartitionedException(getName(), path, e);
    } catch (FluxgateException e) {
      throw catalogError("list partitions of " + table, e);
    }
  }

  /** Unsupported: the planner then lists every partition and prunes them itself. */
  @Override
  public List<CatalogPartitionSpec> listPartitionsByFilter(ObjectPath path, List<Expression> f) {
    throw new UnsupportedOperationException("fluxgate lists partitions by spec, not by filter");
  }

  @Override
  public CatalogPartition getPartition(ObjectPath path, CatalogPartitionSpec spec)
      throws PartitionNotExistException {
    if (!partitionExists(path, spec)) {
      throw new PartitionNotExistException(getName(), path, spec);
    }
    return new CatalogPartitionImpl(Map.of(), null);
  }

  @Override
  public boolean partitionExists(ObjectPath path, CatalogPartitionSpec spec) {
    try {
      return !listPartitions(path, spec).isEmpty();
    } catch (TableNotExistException | TableNotPartitionedException e) {
      return false;
    }
  }

  @Override
  public void createPartition(
      ObjectPath path, CatalogPartitionSpec spec, CatalogPartition p, boolean ignoreIfExists)
      throws TableNotExistException,
          TableNotPartitionedException,
          PartitionSpecInvalidException,
          PartitionAlreadyExistsException {
    if (!p.getProperties().isEmpty()) {
      throw new ValidationException(
          "fluxgate partitions take no options, got " + p.getProperties().keySet());
    }
    String table = TableName.of(path).writable();
    try {
      client.createPartition(table, spec.getPartitionSpec(), ignoreIfExists);
    } catch (FluxgateException.AlreadyExists e) {
      throw new PartitionAlreadyExistsException(getName(), path, spec, e);
    } catch (FluxgateException.NotFound e) {
      throw new TableNotExistException(getName(), path, e);
    } catch (FluxgateException.FailedPrecondition e) {
      throw new TableNotPartitionedException(getName(), path, e);
    } catch (FluxgateException.InvalidArgument e) {
      throw new PartitionSpecInvalidException(getName(), partitionKeys(table), path, spec, e);
    } catch (FluxgateException e) {
      throw catalogError("create partition " + spec + " of " + table, e);
    }
  }

  @Override
  public void dropPartition(ObjectPath path, CatalogPartitionSpec spec, boolean ignoreIfNotExists)
      throws PartitionNotExistException {
    String table = TableName.of(path).writable();
    try {
      client.dropPartition(table, spec.getPartitionSpec(), ignoreIfNotExists);
    } catch (FluxgateException.NotFound | FluxgateException.FailedPrecondition e) {
      throw new PartitionNotExistException(getName(), path, spec, e);
    } catch (FluxgateException.InvalidArgument e) {
      throw new ValidationException(
          "drop partition " + spec + " of " + table + ": " + e.getMessage(), e);
    } catch (FluxgateException e) {
      throw catalogError("drop partition " + spec + " of " + table, e);
    }
  }

  @Override
  public void alterPartition(
      ObjectPath path, CatalogPartitionSpec spec, CatalogPartition p, boolean ignoreIfNotExists) {
    throw new UnsupportedOperationException("fluxgate partitions have nothing to alter");
  }

  private List<String> partitionKeys(String table) {
    return call(() -> client.describeTable(table).partitionKeys());
  }

  // Every database has the roaring-bitmap functions, as in Fluss's catalog.
  @Override
  public List<String> listFunctions(String database) {
    return List.copyOf(RbFunctions.BY_NAME.keySet());
  }

  @Override
  public CatalogFunction getFunction(ObjectPath path) throws FunctionNotExistException {
    String className = RbFunctions.BY_NAME.get(path.getObjectName().toLowerCase(Locale.ROOT));
    if (className == null || !databaseExists(path.getDatabaseName())) {
      throw new FunctionNotExistException(getName(), path);
    }
    return new CatalogFunctionImpl(className, FunctionLanguage.JAVA);
  }

  @Override
  public boolean functionExists(ObjectPath path) {
    return RbFunctions.BY_NAME.containsKey(path.getObjectName().toLowerCase(Locale.ROOT));
  }

  @Override
  public void createFunction(ObjectPath path, CatalogFunction f, boolean ignoreIfExists) {
    throw new UnsupportedOperationException("fluxgate stores no functions");
  }

  @Override
  public void alterFunction(ObjectPath path, CatalogFunction f, boolean ignoreIfNotExists) {
    throw new UnsupportedOperationException("fluxgate stores no functions");
  }

  @Override
  public void dropFunction(ObjectPath path, boolean ignoreIfNotExists) {
    throw new UnsupportedOperationException("fluxgate stores no functions");
  }

  @Override
  public CatalogTableStatistics getTableStatistics(ObjectPath path) {
    return CatalogTableStatistics.UNKNOWN;
  }

  @Override
  public CatalogColumnStatistics getTableColumnStatistics(ObjectPath path) {
    return CatalogColumnStatistics.UNKNOWN;
  }

  @Override
  public CatalogTableStatistics getPartitionStatistics(ObjectPath path, CatalogPartitionSpec s) {
    return CatalogTableStatistics.UNKNOWN;
  }

  @Override
  public CatalogColumnStatistics getPartitionColumnStatistics(
      ObjectPath path, CatalogPartitionSpec s) {
    return CatalogColumnStatistics.UNKNOWN;
  }

  @Override
  public void alterTableStatistics(
      ObjectPath path, CatalogTableStatistics stats, boolean ignoreIfNotExists) {
    throw new UnsupportedOperationException("fluxgate keeps its own statistics");
  }

  @Override
  public void alterTableColumnStatistics(
      ObjectPath path, CatalogColumnStatistics stats, boolean ignoreIfNotExists) {
    throw new UnsupportedOperationException("fluxgate keeps its own statistics");
  }

  @Override
  public void alterPartitionStatistics(
      ObjectPath path,
      CatalogPartitionSpec spec,
      CatalogTableStatistics stats,
      boolean ignoreIfNotExists) {
    throw new UnsupportedOperationException("fluxgate keeps its own statistics");
  }

  @Override
  public void alterPartitionColumnStatistics(
      ObjectPath path,
      CatalogPartitionSpec spec,
      CatalogColumnStatistics stats,
      boolean ignoreIfNotExists) {
    throw new UnsupportedOperationException("fluxgate keeps its own statistics");
  }

  private <T> T call(java.util.function.Supplier<T> action) {
    try {
      return action.get();
    } catch (FluxgateException e) {
      throw catalogError("fluxgate catalog " + getName(), e);
    }
  }

  private static CatalogException catalogError(String doing, FluxgateException e) {
    return new CatalogException(doing + ": " + e.getMessage(), e);
  }
}
