package io.fluxgate.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructField;
import org.apache.spark.sql.types.StructType;

/**
 * The Spark type of each Arrow type fluxgate sends (PROTOCOL.md §2). A timestamp of any unit is a
 * Spark timestamp (in microseconds, {@link SparkForm}); Spark 4.0 has no TIME type, so a TIME
 * column is a BIGINT of nanoseconds since midnight, which its comment says.
 */
final class ArrowTypes {
  /** What a TIME column's BIGINT holds, for DESCRIBE. */
  static final String TIME_COMMENT = "TIME as nanoseconds since midnight";

  private ArrowTypes() {}

  static StructType sparkSchema(Schema schema) {
    List<StructField> fields = new ArrayList<>();
    for (Field f : schema.getFields()) {
      fields.add(sparkField(f));
    }
    return DataTypes.createStructType(fields);
  }

  private static StructField sparkField(Field f) {
    StructField s = DataTypes.createStructField(f.getName(), sparkType(f), f.isNullable());
    return f.getType() instanceof ArrowType.Time ? s.withComment(TIME_COMMENT) : s;
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
      case Time -> DataTypes.LongType;
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
          children.add(sparkField(c));
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
}
