package io.fluxgate.flink.source;

import com.fasterxml.jackson.databind.JsonNode;
import io.fluxgate.client.Predicates;
import io.fluxgate.flink.ArrowRows;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeNanoVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;

/**
 * Primary-key tuples as predicates (PROTOCOL.md §4.4). A bucket's snapshot is sent in key order
 * (the stored key encoding orders as the value tuples compare, the order filters use too), so the
 * key of the last row a reader emitted cuts the bucket's key space in two: what was emitted and
 * what was not. Every type a key may have (ARRAY, MAP and ROW may not) has an exact literal.
 */
public final class SnapshotKeys {
  private SnapshotKeys() {}

  /** The key of row of the key vectors as JSON literals. */
  static List<Object> of(List<FieldVector> keyVectors, int row) {
    List<Object> values = new ArrayList<>(keyVectors.size());
    for (FieldVector v : keyVectors) {
      values.add(literal(v, row));
    }
    return values;
  }

  /** key > cut, lexicographically over the key columns. */
  static JsonNode above(List<String> columns, List<Object> cut) {
    JsonNode[] alternatives = new JsonNode[columns.size()];
    for (int i = 0; i < columns.size(); i++) {
      JsonNode[] terms = new JsonNode[i + 1];
      for (int j = 0; j < i; j++) {
        terms[j] = Predicates.eq(columns.get(j), cut.get(j));
      }
      terms[i] = Predicates.gt(columns.get(i), cut.get(i));
      alternatives[i] = terms.length == 1 ? terms[0] : Predicates.and(terms);
    }
    return alternatives.length == 1 ? alternatives[0] : Predicates.or(alternatives);
  }

  private static Object literal(FieldVector v, int row) {
    switch (v.getMinorType()) {
      case BIT:
        return ((BitVector) v).get(row) == 1;
      case TINYINT:
        return ((TinyIntVector) v).get(row);
      case SMALLINT:
        return ((SmallIntVector) v).get(row);
      case INT:
        return ((IntVector) v).get(row);
      case BIGINT:
        return ((BigIntVector) v).get(row);
      case DECIMAL:
        return ((DecimalVector) v).getObject(row).toPlainString();
      case VARCHAR:
        return ArrowRows.utf8((VarCharVector) v, row);
      case DATEDAY:
        return LocalDate.ofEpochDay(((DateDayVector) v).get(row)).toString();
      case TIMESTAMPMILLI:
      case TIMESTAMPMICRO:
      case TIMESTAMPNANO:
      case TIMESTAMPMILLITZ:
      case TIMESTAMPMICROTZ:
      case TIMESTAMPNANOTZ:
        return timestamp((TimeStampVector) v, row);
      case TIMEMILLI:
        return time(((TimeMilliVector) v).get(row), 3);
      case TIMEMICRO:
        return time(((TimeMicroVector) v).get(row), 6);
      case TIMENANO:
        return time(((TimeNanoVector) v).get(row), 9);
      case FLOAT4:
        return floating(((Float4Vector) v).get(row));
      case FLOAT8:
        return floating(((Float8Vector) v).get(row));
      case VARBINARY:
        // Bytes that are not UTF-8 text have no JSON string: the server's bytes literal.
        return Map.of("base64", Base64.getEncoder().encodeToString(((VarBinaryVector) v).get(row)));
      default:
        throw new IllegalArgumentException(
            "a primary-key column of type " + v.getField().getType() + " has no literal");
    }
  }

  /** A finite float as it is (its shortest text is exact), the others by their names. */
  private static Object floating(double value) {
    if (Double.isNaN(value)) {
      return "NaN";
    }
    if (Double.isInfinite(value)) {
      return value > 0 ? "Infinity" : "-Infinity";
    }
    return value;
  }

  private static Object floating(float value) {
    return Float.isFinite(value) ? value : floating((double) value);
  }

  /** HH:MM:SS and exactly digits of fraction, from the time of day in 10^-digits seconds. */
  private static String time(long value, int digits) {
    long perSecond = (long) Math.pow(10, digits);
    LocalTime clock = LocalTime.ofSecondOfDay(value / perSecond);
    return clock.format(DateTimeFormatter.ofPattern("HH:mm:ss"))
        + "."
        + String.format("%0" + digits + "d", value % perSecond);
  }

  /** An ISO-8601 timestamp with exactly the unit's digits of fraction (finer is refused). */
  private static String timestamp(TimeStampVector v, int row) {
    ArrowType.Timestamp type = (ArrowType.Timestamp) v.getField().getType();
    long value = v.get(row);
    long perSecond =
        type.getUnit() == TimeUnit.MILLISECOND
            ? 1_000
            : type.getUnit() == TimeUnit.MICROSECOND ? 1_000_000 : 1_000_000_000;
    int digits = Long.toString(perSecond).length() - 1;
    long seconds = Math.floorDiv(value, perSecond);
    long fraction = Math.floorMod(value, perSecond);
    String clock =
        Instant.ofEpochSecond(seconds)
            .atOffset(ZoneOffset.UTC)
            .toLocalDateTime()
            .format(DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss"));
    String text = clock + "." + String.format("%0" + digits + "d", fraction);
    return type.getTimezone() == null ? text : text + "Z";
  }
}
