package io.fluxgate.flink;

import io.fluxgate.client.ConnectionSettings;
import io.fluxgate.flink.lookup.LookupTable;
import io.fluxgate.flink.sink.FluxgateTableSink;
import io.fluxgate.flink.sink.SinkOptions;
import io.fluxgate.flink.source.FluxgateTableSource;
import io.fluxgate.flink.source.StartupTimestamp;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.api.common.RuntimeExecutionMode;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ExecutionOptions;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.ObjectIdentifier;
import org.apache.flink.table.catalog.UniqueConstraint;
import org.apache.flink.table.connector.sink.DynamicTableSink;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.factories.DynamicTableSinkFactory;
import org.apache.flink.table.factories.DynamicTableSourceFactory;
import org.apache.flink.table.factories.FactoryUtil;
import org.apache.flink.table.types.logical.RowType;

/**
 * The table factory: {@code 'connector'='fluxgate'} tables (connection in their options, the
 * server's table in 'table'), and the catalog's tables (connection from the catalog).
 */
public final class FluxgateTableFactory
    implements DynamicTableSourceFactory, DynamicTableSinkFactory {
  /** The catalog's connection; null for 'connector'='fluxgate' tables. */
  private final ConnectionSettings catalogConnection;

  /** For the service loader: 'connector'='fluxgate' tables. */
  public FluxgateTableFactory() {
    this(null);
  }

  public FluxgateTableFactory(ConnectionSettings catalogConnection) {
    this.catalogConnection = catalogConnection;
  }

  @Override
  public String factoryIdentifier() {
    return FluxgateOptions.IDENTIFIER;
  }

  @Override
  public Set<ConfigOption<?>> requiredOptions() {
    return Set.of();
  }

  @Override
  public Set<ConfigOption<?>> optionalOptions() {
    Set<ConfigOption<?>> options = new HashSet<>(FluxgateOptions.CONNECTION);
    options.addAll(FluxgateOptions.READ_WRITE);
    options.addAll(FluxgateOptions.LOOKUP);
    options.addAll(FluxgateOptions.SINK);
    options.add(FluxgateOptions.TABLE);
    return options;
  }

  @Override
  public DynamicTableSource createDynamicTableSource(Context context) {
    ReadableConfig options = validated(context);
    boolean batch =
        context.getConfiguration().get(ExecutionOptions.RUNTIME_MODE) == RuntimeExecutionMode.BATCH;
    FluxgateTableSource source =
        FluxgateTableSource.of(
            connection(options),
            tableName(context.getObjectIdentifier(), options),
            context
                .getCatalogTable()
                .getResolvedSchema()
                .getPrimaryKey()
                .map(UniqueConstraint::getColumns)
                .orElse(List.of()),
            context.getCatalogTable().getOptions(),
            options.get(FluxgateOptions.SCAN_STARTUP_MODE),
            options.getOptional(FluxgateOptions.SCAN_STARTUP_MODE).isPresent(),
            StartupTimestamp.of(options, context.getConfiguration()),
            batch,
            context.getPhysicalRowDataType(),
            context.getCatalogTable().getPartitionKeys(),
            options.get(FluxgateOptions.SCAN_PARTITION_DISCOVERY_INTERVAL).toMillis());
    source.lookups =
        LookupTable.of(
            connection(options),
            tableName(context.getObjectIdentifier(), options),
            context.getCatalogTable(),
            options);
    return source;
  }

  @Override
  public DynamicTableSink createDynamicTableSink(Context context) {
    ReadableConfig options = validated(context);
    return new FluxgateTableSink(
        connection(options),
        tableName(context.getObjectIdentifier(), options),
        (RowType) context.getPhysicalRowDataType().getLogicalType(),
        context.getCatalogTable().getResolvedSchema().getPrimaryKey().isPresent(),
        options.get(FluxgateOptions.SINK_IGNORE_DELETE),
        SinkOptions.from(options));
  }

  private ReadableConfig validated(Context context) {
    FactoryUtil.TableFactoryHelper helper = FactoryUtil.createTableFactoryHelper(this, context);
    // Storage options (the table's own, as the catalog describes them) and client.* tuning are
    // not the factory's to check; anything else unknown fails naming the key.
    helper.validateExcept(
        "table.",
        "fields.",
        "iceberg.",
        "bucket.",
        "auto-increment.",
        FluxgateOptions.CLIENT_PREFIX);
    return helper.getOptions();
  }

  private ConnectionSettings connection(ReadableConfig options) {
    if (catalogConnection != null) {
      return catalogConnection;
    }
    if (options.getOptional(FluxgateOptions.ENDPOINT).isEmpty()) {
      throw new ValidationException(
          "a 'connector'='fluxgate' table needs the option '"
              + FluxgateOptions.ENDPOINT.key()
              + "'");
    }
    return FluxgateOptions.connection(options);
  }

  private TableName tableName(ObjectIdentifier id, ReadableConfig options) {
    if (catalogConnection != null) {
      return TableName.of(id.getDatabaseName(), id.getObjectName());
    }
    String table = options.getOptional(FluxgateOptions.TABLE).orElse(id.getObjectName());
    int dot = table.indexOf('.');
    return dot < 0
        ? TableName.of(options.get(FluxgateOptions.DEFAULT_DATABASE), table)
        : TableName.of(table.substring(0, dot), table.substring(dot + 1));
  }
}
