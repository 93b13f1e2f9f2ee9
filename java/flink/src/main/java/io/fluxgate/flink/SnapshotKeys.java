package io.fluxgate.flink;

import com.fasterxml.jackson.databind.JsonNode;
import io.fluxgate.client.Predicates;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;

/**
 * Primary-key tuples as predicates (PROTOCOL.md §4.4). A bucket's snapshot is sent in key order
 * (the stored key encoding orders as the value tuples compare, the order filters use too), so the
 * key of the last row a reader emitted cuts the bucket's key space in two: what was emitted and
 * what was not. Keys of TIME, BINARY and FLOAT columns have no exact JSON literal; their tables
 * cannot cut.
 */
final class SnapshotKeys {
  private SnapshotKeys() {}

  /** The key of row of the key vectors as JSON scalars, or empty if a type cannot be a literal. */
  static Optional<List<Object>> of(List<FieldVector> keyVectors, int row) {
    List<Object> values = new ArrayList<>(keyVectors.size());
    for (FieldVector v : keyVectors) {
      Object value = literal(v, row);
      if (value == null) {
        return Optional.empty();
      }
      values.add(value);
    }
    return Optional.of(values);
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
      default:
        return null; // FLOAT4/8 (NaN has no JSON literal), TIME and BINARY: see the class doc
    }
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
