package io.fluxgate.flink;

import java.util.ArrayList;
import java.util.List;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.BinaryType;
import org.apache.flink.table.types.logical.CharType;
import org.apache.flink.table.types.logical.DecimalType;
import org.apache.flink.table.types.logical.LocalZonedTimestampType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.MapType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.TimeType;
import org.apache.flink.table.types.logical.TimestampType;
import org.apache.flink.table.types.logical.VarBinaryType;
import org.apache.flink.table.types.logical.VarCharType;
import org.apache.flink.table.types.logical.utils.LogicalTypeParser;

/**
 * Maps column types between Flink and fluxgate. fluxgate names its types in Flink SQL (PROTOCOL.md
 * §2), so reading is Flink's own parser; writing spells each supported type the way the server
 * parses it and refuses the rest by name.
 */
public final class FluxgateTypes {
  private FluxgateTypes() {}

  /** The Flink type of a fluxgate column type such as "DECIMAL(10,2)" or "ARRAY<INT NOT NULL>". */
  public static LogicalType toFlink(String fluxgateType, boolean nullable) {
    try {
      return LogicalTypeParser.parse(fluxgateType, FluxgateTypes.class.getClassLoader())
          .copy(nullable);
    } catch (RuntimeException e) {
      throw new ValidationException(
          "fluxgate type " + fluxgateType + " has no Flink type: " + e.getMessage(), e);
    }
  }

  /**
   * The fluxgate spelling of a Flink type, without its top-level nullability (a column carries that
   * apart). Types fluxgate does not store are a ValidationException naming them.
   */
  public static String toFluxgate(LogicalType type) {
    switch (type.getTypeRoot()) {
      case BOOLEAN:
        return "BOOLEAN";
      case TINYINT:
        return "TINYINT";
      case SMALLINT:
        return "SMALLINT";
      case INTEGER:
        return "INT";
      case BIGINT:
        return "BIGINT";
      case FLOAT:
        return "FLOAT";
      case DOUBLE:
        return "DOUBLE";
      case DATE:
        return "DATE";
      case DECIMAL:
        DecimalType d = (DecimalType) type;
        return "DECIMAL(" + d.getPrecision() + "," + d.getScale() + ")";
      case CHAR:
        return "CHAR(" + ((CharType) type).getLength() + ")";
      case VARCHAR:
        int n = ((VarCharType) type).getLength();
        return n == VarCharType.MAX_LENGTH ? "STRING" : "VARCHAR(" + n + ")";
      case BINARY:
        return "BINARY(" + ((BinaryType) type).getLength() + ")";
      case VARBINARY:
        int b = ((VarBinaryType) type).getLength();
        return b == VarBinaryType.MAX_LENGTH ? "BYTES" : "VARBINARY(" + b + ")";
      case TIME_WITHOUT_TIME_ZONE:
        return "TIME(" + ((TimeType) type).getPrecision() + ")";
      case TIMESTAMP_WITHOUT_TIME_ZONE:
        return "TIMESTAMP(" + ((TimestampType) type).getPrecision() + ")";
      case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
        return "TIMESTAMP_LTZ(" + ((LocalZonedTimestampType) type).getPrecision() + ")";
      case ARRAY:
        return "ARRAY<" + element(((ArrayType) type).getElementType()) + ">";
      case MAP:
        MapType m = (MapType) type;
        return "MAP<" + element(m.getKeyType()) + ", " + element(m.getValueType()) + ">";
      case ROW:
        List<String> fields = new ArrayList<>();
        for (RowType.RowField f : ((RowType) type).getFields()) {
          if (!f.getName().matches("[A-Za-z_][A-Za-z0-9_]*")) {
            throw new ValidationException(
                "ROW field name '"
                    + f.getName()
                    + "' is not supported by fluxgate: use letters,"
                    + " digits and underscores");
          }
          fields.add(f.getName() + " " + element(f.getType()));
        }
        return "ROW<" + String.join(", ", fields) + ">";
      default:
        throw new ValidationException(
            "type " + type.asSummaryString() + " is not supported by fluxgate");
    }
  }

  private static String element(LogicalType type) {
    return toFluxgate(type) + (type.isNullable() ? "" : " NOT NULL");
  }
}
