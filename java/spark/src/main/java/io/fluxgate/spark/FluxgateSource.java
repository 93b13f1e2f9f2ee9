package io.fluxgate.spark;

import java.util.Map;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * {@code spark.read.format("fluxgate").option("endpoint", ...).option("table", "db.t").load()}: the
 * table named by the "table" option, with the connection options of {@link FluxgateOptions}.
 */
public final class FluxgateSource implements TableProvider, DataSourceRegister {
  /** What inferSchema loaded: Spark asks getTable for the same table right after. */
  private FluxgateTable inferred;

  @Override
  public String shortName() {
    return "fluxgate";
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    inferred = load(options);
    return inferred.schema();
  }

  /** The table's partition keys, as identity transforms. */
  @Override
  public Transform[] inferPartitioning(CaseInsensitiveStringMap options) {
    if (inferred == null) {
      inferred = load(options);
    }
    return inferred.partitioning();
  }

  @Override
  public Table getTable(
      StructType schema, Transform[] partitioning, Map<String, String> properties) {
    CaseInsensitiveStringMap options = new CaseInsensitiveStringMap(properties);
    if (inferred != null
        && inferred.name().equals(options.get(FluxgateOptions.TABLE))
        && inferred.connection().equals(FluxgateOptions.from(options))
        && inferred.schema().equals(schema)) {
      return inferred;
    }
    return load(options);
  }

  private static FluxgateTable load(CaseInsensitiveStringMap options) {
    String table = options.get(FluxgateOptions.TABLE);
    if (table == null || table.isEmpty()) {
      throw new IllegalArgumentException(
          "fluxgate: the \"table\" option is missing; set it to \"database.table\"");
    }
    return FluxgateTable.load(FluxgateOptions.from(options), table);
  }
}
