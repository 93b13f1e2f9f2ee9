package io.fluxgate.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The Spark type of each Arrow type fluxgate sends (PROTOCOL.md §2). Spark reads timestamps in
 * microseconds only, so a timestamp of another unit has a "Spark form" in microseconds; every other
 * type is read as stored.
 */
final class ArrowTypes {
  private ArrowTypes() {}

  static StructType sparkSchema(Schema schema) {
    List<StructField> fields = new ArrayList<>();
    for (Field f : schema.getFields()) {
      fields.add(DataTypes.createStructField(f.getName(), sparkType(f), f.isNullable()));
    }
    return DataTypes.createStructType(fields);
  }

  static DataType sparkType(Field field) {
    ArrowType t = field.getType();
    return switch (t.getTypeID()) {
      case Bool -> DataTypes.BooleanType;
      case Int ->
          switch (((ArrowType.Int) t).getBitWidth()) {
            case 8 -> DataTypes.ByteType;
            case 16 -> DataTypes.ShortType;
            case 32 -> DataTypes.IntegerType;
            default -> DataTypes.LongType;
          };
      case FloatingPoint ->
          ((ArrowType.FloatingPoint) t).getPrecision()
                  == org.apache.arrow.vector.types.FloatingPointPrecision.SINGLE
              ? DataTypes.FloatType
              : DataTypes.DoubleType;
      case Decimal ->
          DataTypes.createDecimalType(
              ((ArrowType.Decimal) t).getPrecision(), ((ArrowType.Decimal) t).getScale());
      case Utf8, LargeUtf8 -> DataTypes.StringType;
      case Binary, LargeBinary, FixedSizeBinary -> DataTypes.BinaryType;
      case Date -> DataTypes.DateType;
      case Timestamp ->
          ((ArrowType.Timestamp) t).getTimezone() == null
              ? DataTypes.TimestampNTZType
              : DataTypes.TimestampType;
      case List ->
          DataTypes.createArrayType(
              sparkType(field.getChildren().get(0)), field.getChildren().get(0).isNullable());
      case Map -> {
        Field entries = field.getChildren().get(0);
        Field value = entries.getChildren().get(1);
        yield DataTypes.createMapType(
            sparkType(entries.getChildren().get(0)), sparkType(value), value.isNullable());
      }
      case Struct -> {
        List<StructField> children = new ArrayList<>();
        for (Field c : field.getChildren()) {
          children.add(DataTypes.createStructField(c.getName(), sparkType(c), c.isNullable()));
        }
        yield DataTypes.createStructType(children);
      }
      default ->
          throw new UnsupportedOperationException(
              "column "
                  + field.getName()
                  + ": Arrow type "
                  + t
                  + " has no Spark type in this connector");
    };
  }

  /** Whether Spark reads a vector of this field as it is (no timestamp of another unit in it). */
  static boolean sparkReadsAsIs(Field field) {
    if (field.getType() instanceof ArrowType.Timestamp ts) {
      return ts.getUnit() == TimeUnit.MICROSECOND;
    }
    for (Field c : field.getChildren()) {
      if (!sparkReadsAsIs(c)) {
        return false;
      }
    }
    return true;
  }

  /** The field with every timestamp in microseconds: what Spark reads and writes. */
  static Field sparkForm(Field field) {
    ArrowType type = field.getType();
    if (type instanceof ArrowType.Timestamp ts && ts.getUnit() != TimeUnit.MICROSECOND) {
      type = new ArrowType.Timestamp(TimeUnit.MICROSECOND, ts.getTimezone());
    }
    List<Field> children = new ArrayList<>();
    for (Field c : field.getChildren()) {
      children.add(sparkForm(c));
    }
    FieldType ft =
        new FieldType(field.isNullable(), type, field.getDictionary(), field.getMetadata());
    return new Field(field.getName(), ft, children);
  }
}
