package io.fluxgate.flink;

import io.fluxgate.client.Column;
import io.fluxgate.client.SystemColumns;
import io.fluxgate.client.TableInfo;
import io.fluxgate.client.TableSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.table.api.DataTypes;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.CatalogTable;
import org.apache.flink.table.catalog.ResolvedCatalogTable;
import org.apache.flink.table.catalog.ResolvedSchema;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.utils.TypeConversions;

/** Converts table definitions between Flink's catalog and fluxgate's TableSpec/TableInfo. */
public final class FluxgateTables {
  private FluxgateTables() {}

  /** The Flink table of a fluxgate table, or of one of its views. */
  public static CatalogTable toFlink(TableInfo info, TableName.View view) {
    Schema.Builder schema = Schema.newBuilder();
    if (view == TableName.View.CHANGELOG) {
      schema.column(SystemColumns.CHANGE_TYPE, DataTypes.STRING().notNull());
      schema.column(SystemColumns.LOG_OFFSET, DataTypes.BIGINT().notNull());
      schema.column(SystemColumns.COMMIT_TIMESTAMP, DataTypes.TIMESTAMP_LTZ(3).notNull());
    }
    for (Column c : info.columns()) {
      LogicalType type = FluxgateTypes.toFlink(c.type(), c.nullable());
      schema.column(c.name(), TypeConversions.fromLogicalToDataType(type));
      if (c.comment() != null) {
        schema.withComment(c.comment());
      }
    }
    if (view == TableName.View.LAKE) {
      schema.column(SystemColumns.BUCKET, DataTypes.INT().notNull());
      schema.column(SystemColumns.OFFSET, DataTypes.BIGINT().notNull());
      schema.column(SystemColumns.TIMESTAMP, DataTypes.TIMESTAMP_LTZ(6).notNull());
    }
    // A view is not keyed: its rows are changes (or tiered copies), not the table's rows.
    if (view == null && info.primaryKey() != null && !info.primaryKey().isEmpty()) {
      schema.primaryKey(info.primaryKey());
      // The lookup indexes (the key, the bucket-key prefix): what a delta join looks up by.
      if (info.indexes() != null) {
        info.indexes().forEach(index -> schema.indexNamed(index.name(), index.columns()));
      }
    }
    return CatalogTable.newBuilder()
        .schema(schema.build())
        .comment(info.comment())
        .partitionKeys(info.partitionKeys() == null ? List.of() : info.partitionKeys())
        .options(info.options() == null ? Map.of() : info.options())
        .build();
  }

  /**
   * The fluxgate definition of a Flink table. WITH options are storage options passed one to one;
   * connection and per-query options are refused here by name (they are set on the catalog or in
   * hints), as is any other key.
   */
  public static TableSpec toSpec(String name, ResolvedCatalogTable table) {
    ResolvedSchema schema = table.getResolvedSchema();
    List<Column> columns = new ArrayList<>();
    for (org.apache.flink.table.catalog.Column c : schema.getColumns()) {
      columns.add(toColumn(c));
    }
    List<String> primaryKey = schema.getPrimaryKey().map(pk -> pk.getColumns()).orElse(List.of());
    Map<String, String> options = new LinkedHashMap<>();
    for (Map.Entry<String, String> e : table.getOptions().entrySet()) {
      String key = e.getKey();
      if (FluxgateOptions.isStorageOption(key)) {
        options.put(key, e.getValue());
      } else if (isConnectorOption(key)) {
        throw new ValidationException(
            "option '"
                + key
                + "' is not stored with a fluxgate table: set it on the catalog or"
                + " per query with /*+ OPTIONS('"
                + key
                + "'='...') */");
      } else {
        throw new ValidationException(
            "unsupported option '" + key + "' for fluxgate table " + name);
      }
    }
    return new TableSpec(
        name, columns, primaryKey, table.getPartitionKeys(), options, table.getComment());
  }

  private static boolean isConnectorOption(String key) {
    for (List<ConfigOption<?>> group :
        List.of(
            FluxgateOptions.CONNECTION,
            FluxgateOptions.READ_WRITE,
            FluxgateOptions.LOOKUP,
            FluxgateOptions.SINK)) {
      for (ConfigOption<?> o : group) {
        if (o.key().equals(key)) {
          return true;
        }
      }
    }
    return key.equals("connector") || key.startsWith(FluxgateOptions.CLIENT_PREFIX);
  }

  public static Column toColumn(org.apache.flink.table.catalog.Column c) {
    if (!c.isPhysical()) {
      throw new ValidationException(
          "column " + c.getName() + ": fluxgate stores physical columns only");
    }
    LogicalType type = c.getDataType().getLogicalType();
    String fluxgate;
    try {
      fluxgate = FluxgateTypes.toFluxgate(type);
    } catch (ValidationException e) {
      throw new ValidationException("column " + c.getName() + ": " + e.getMessage(), e);
    }
    return new Column(c.getName(), fluxgate, type.isNullable(), c.getComment().orElse(null));
  }
}
