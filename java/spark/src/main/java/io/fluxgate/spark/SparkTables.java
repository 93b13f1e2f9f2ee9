package io.fluxgate.spark;

import io.fluxgate.client.Column;
import io.fluxgate.client.TableSpec;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.expressions.IdentityTransform;
import org.apache.spark.sql.connector.expressions.NamedReference;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.DecimalType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * A Spark CREATE TABLE as a fluxgate table: columns by type, {@code PARTITIONED BY (dt)} as the
 * partition keys, TBLPROPERTIES as the table's options, with {@code 'primary.key'='a,b'} (Fluss's
 * Spark property) naming the primary key.
 */
final class SparkTables {
  /** The table property that names the primary key's columns, comma-separated. */
  static final String PRIMARY_KEY = "primary.key";

  /** Properties Spark sets itself, which are not the table's options. */
  private static final Set<String> SPARK_PROPERTIES =
      Set.of(
          TableCatalog.PROP_OWNER,
          TableCatalog.PROP_PROVIDER,
          TableCatalog.PROP_COMMENT,
          TableCatalog.PROP_LOCATION,
          TableCatalog.PROP_EXTERNAL,
          TableCatalog.PROP_IS_MANAGED_LOCATION);

  private SparkTables() {}

  static TableSpec spec(
      String table, StructType schema, Transform[] partitions, Map<String, String> properties) {
    List<Column> columns = new ArrayList<>();
    for (StructField f : schema.fields()) {
      Column c = f.nullable() ? Column.of(f.name(), type(f)) : Column.notNull(f.name(), type(f));
      columns.add(f.getComment().isDefined() ? c.withComment(f.getComment().get()) : c);
    }
    Map<String, String> options = new LinkedHashMap<>();
    List<String> primaryKey = List.of();
    for (Map.Entry<String, String> e : properties.entrySet()) {
      if (e.getKey().equals(PRIMARY_KEY)) {
        primaryKey = Arrays.stream(e.getValue().split(",")).map(String::trim).toList();
      } else if (!SPARK_PROPERTIES.contains(e.getKey())
          && !e.getKey().startsWith(TableCatalog.OPTION_PREFIX)) {
        options.put(e.getKey(), e.getValue());
      }
    }
    return new TableSpec(
        table,
        columns,
        primaryKey,
        partitionKeys(table, partitions),
        options,
        properties.get(TableCatalog.PROP_COMMENT));
  }

  /** The columns of identity transforms: a fluxgate table is partitioned by values only. */
  private static List<String> partitionKeys(String table, Transform[] partitions) {
    List<String> keys = new ArrayList<>();
    for (Transform t : partitions) {
      if (!(t instanceof IdentityTransform identity)) {
        throw new IllegalArgumentException(
            "create " + table + ": fluxgate partitions by column values, not by " + t.describe());
      }
      NamedReference ref = identity.ref();
      if (ref.fieldNames().length != 1) {
        throw new IllegalArgumentException(
            "create " + table + ": partition by a top-level column, not " + ref.describe());
      }
      keys.add(ref.fieldNames()[0]);
    }
    return keys;
  }

  /** The fluxgate type of a Spark column (PROTOCOL.md §2). */
  private static String type(StructField field) {
    try {
      return type(field.dataType());
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("column " + field.name() + ": " + e.getMessage(), e);
    }
  }

  private static String type(DataType t) {
    if (t.equals(DataTypes.BooleanType)) {
      return "BOOLEAN";
    } else if (t.equals(DataTypes.ByteType)) {
      return "TINYINT";
    } else if (t.equals(DataTypes.ShortType)) {
      return "SMALLINT";
    } else if (t.equals(DataTypes.IntegerType)) {
      return "INT";
    } else if (t.equals(DataTypes.LongType)) {
      return "BIGINT";
    } else if (t.equals(DataTypes.FloatType)) {
      return "FLOAT";
    } else if (t.equals(DataTypes.DoubleType)) {
      return "DOUBLE";
    } else if (t instanceof DecimalType d) {
      return "DECIMAL(" + d.precision() + "," + d.scale() + ")";
    } else if (t.equals(DataTypes.StringType)) {
      return "STRING";
    } else if (t.equals(DataTypes.BinaryType)) {
      return "BYTES";
    } else if (t.equals(DataTypes.DateType)) {
      return "DATE";
    } else if (t.equals(DataTypes.TimestampNTZType)) {
      return "TIMESTAMP(6)";
    } else if (t.equals(DataTypes.TimestampType)) {
      return "TIMESTAMP_LTZ(6)";
    } else if (t instanceof ArrayType a) {
      return "ARRAY<" + element(a.elementType(), a.containsNull()) + ">";
    } else if (t instanceof MapType m) {
      return "MAP<"
          + element(m.keyType(), false)
          + ", "
          + element(m.valueType(), m.valueContainsNull())
          + ">";
    } else if (t instanceof StructType s) {
      List<String> fields = new ArrayList<>();
      for (StructField f : s.fields()) {
        fields.add(f.name() + " " + element(f.dataType(), f.nullable()));
      }
      return "ROW<" + String.join(", ", fields) + ">";
    }
    throw new IllegalArgumentException("Spark type " + t.sql() + " has no fluxgate type");
  }

  private static String element(DataType t, boolean nullable) {
    return type(t) + (nullable ? "" : " NOT NULL");
  }
}
