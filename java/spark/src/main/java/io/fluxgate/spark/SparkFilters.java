package io.fluxgate.spark;

import com.fasterxml.jackson.databind.JsonNode;
import io.fluxgate.client.Predicates;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.sources.And;
import org.apache.spark.sql.sources.EqualNullSafe;
import org.apache.spark.sql.sources.EqualTo;
import org.apache.spark.sql.sources.Filter;
import org.apache.spark.sql.sources.GreaterThan;
import org.apache.spark.sql.sources.GreaterThanOrEqual;
import org.apache.spark.sql.sources.In;
import org.apache.spark.sql.sources.IsNotNull;
import org.apache.spark.sql.sources.IsNull;
import org.apache.spark.sql.sources.LessThan;
import org.apache.spark.sql.sources.LessThanOrEqual;
import org.apache.spark.sql.sources.Not;
import org.apache.spark.sql.sources.Or;
import org.apache.spark.sql.sources.StringStartsWith;
import org.apache.spark.sql.types.ArrayType;
import org.apache.spark.sql.types.BinaryType;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.MapType;
import org.apache.spark.sql.types.StringType;
import org.apache.spark.sql.types.StructType;

/**
 * Translates Spark filters into fluxgate predicates (PROTOCOL.md §4.4). The server's results are
 * exact, so a filter translated here is not evaluated again by Spark; one that is not (a nested
 * column, a binary or NaN value, a NULL inside IN, a comparison with a TIME column) stays with
 * Spark.
 */
final class SparkFilters {
  private static final DateTimeFormatter LOCAL =
      DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS");

  private final Schema schema;

  /** Filters over the columns of schema, the scan's Arrow schema before pruning. */
  SparkFilters(Schema schema) {
    this.schema = schema;
  }

  /** The predicate of f, or empty when the server cannot evaluate f exactly as Spark would. */
  Optional<JsonNode> translate(Filter f) {
    if (f instanceof And a) {
      return both(a.left(), a.right(), true);
    }
    if (f instanceof Or o) {
      return both(o.left(), o.right(), false);
    }
    if (f instanceof Not n) {
      return translate(n.child()).map(Predicates::not);
    }
    if (f instanceof IsNull n) {
      return column(n.attribute()).map(Predicates::isNull);
    }
    if (f instanceof IsNotNull n) {
      return column(n.attribute()).map(Predicates::isNotNull);
    }
    if (f instanceof EqualTo e) {
      return compare(e.attribute(), e.value()).map(v -> Predicates.eq(e.attribute(), v));
    }
    if (f instanceof EqualNullSafe e) {
      if (e.value() == null) {
        return column(e.attribute()).map(Predicates::isNull);
      }
      // Never unknown: false, not NULL, for a NULL column, which matters under a NOT.
      return compare(e.attribute(), e.value())
          .map(
              v ->
                  Predicates.and(
                      Predicates.isNotNull(e.attribute()), Predicates.eq(e.attribute(), v)));
    }
    if (f instanceof GreaterThan c) {
      return compare(c.attribute(), c.value()).map(v -> Predicates.gt(c.attribute(), v));
    }
    if (f instanceof GreaterThanOrEqual c) {
      return compare(c.attribute(), c.value()).map(v -> Predicates.ge(c.attribute(), v));
    }
    if (f instanceof LessThan c) {
      return compare(c.attribute(), c.value()).map(v -> Predicates.lt(c.attribute(), v));
    }
    if (f instanceof LessThanOrEqual c) {
      return compare(c.attribute(), c.value()).map(v -> Predicates.le(c.attribute(), v));
    }
    if (f instanceof In in) {
      if (in.values().length == 0) {
        return Optional.empty();
      }
      List<Object> values = new ArrayList<>();
      for (Object v : in.values()) {
        Optional<Object> w = compare(in.attribute(), v);
        if (w.isEmpty()) {
          return Optional.empty();
        }
        values.add(w.get());
      }
      return Optional.of(Predicates.in(in.attribute(), values.toArray()));
    }
    if (f instanceof StringStartsWith s && type(s.attribute()) instanceof StringType) {
      return Optional.of(Predicates.startsWith(s.attribute(), s.value()));
    }
    return Optional.empty();
  }

  private Optional<JsonNode> both(Filter left, Filter right, boolean and) {
    Optional<JsonNode> l = translate(left);
    Optional<JsonNode> r = translate(right);
    if (l.isEmpty() || r.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(and ? Predicates.and(l.get(), r.get()) : Predicates.or(l.get(), r.get()));
  }

  /** The attribute when it names a top-level column of the scan. */
  private Optional<String> column(String attribute) {
    return type(attribute) == null ? Optional.empty() : Optional.of(attribute);
  }

  private DataType type(String attribute) {
    Field f = field(attribute);
    return f == null ? null : ArrowTypes.sparkType(f);
  }

  private Field field(String attribute) {
    for (Field f : schema.getFields()) {
      if (f.getName().equals(attribute)) {
        return f;
      }
    }
    return null;
  }

  /** The JSON value of a comparison with attribute, or empty when it is not comparable there. */
  private Optional<Object> compare(String attribute, Object value) {
    DataType t = type(attribute);
    if (t == null
        || value == null
        || t instanceof BinaryType
        || t instanceof ArrayType
        || t instanceof MapType
        || t instanceof StructType) {
      return Optional.empty();
    }
    if (field(attribute).getType() instanceof ArrowType.Time) {
      return Optional.empty(); // Spark's nanoseconds since midnight, not the server's time literal
    }
    if (!exactIn(field(attribute).getType(), value)) {
      return Optional.empty();
    }
    return Optional.ofNullable(json(value));
  }

  /**
   * Whether the server, coercing value to the column's type, keeps it whole: a decimal of more
   * scale or a timestamp finer than the column would be rounded there but not in Spark.
   */
  private static boolean exactIn(ArrowType column, Object value) {
    if (column instanceof ArrowType.Decimal d && value instanceof BigDecimal v) {
      return v.stripTrailingZeros().scale() <= d.getScale();
    }
    if (column instanceof ArrowType.Timestamp ts) {
      long micros;
      if (value instanceof java.sql.Timestamp t) {
        micros = ChronoUnit.MICROS.between(Instant.EPOCH, t.toInstant());
      } else if (value instanceof Instant i) {
        micros = ChronoUnit.MICROS.between(Instant.EPOCH, i);
      } else if (value instanceof LocalDateTime l) {
        micros = ChronoUnit.MICROS.between(Instant.EPOCH, l.toInstant(ZoneOffset.UTC));
      } else {
        return false;
      }
      return ts.getUnit() != TimeUnit.SECOND && ts.getUnit() != TimeUnit.MILLISECOND
          || micros % (ts.getUnit() == TimeUnit.SECOND ? 1_000_000 : 1_000) == 0;
    }
    return true;
  }

  /** The value as the server coerces it (§4.4), or null for one JSON cannot carry exactly. */
  private static Object json(Object v) {
    if (v instanceof Double d) {
      return d.isNaN() || d.isInfinite() ? null : d;
    }
    if (v instanceof Float f) {
      return f.isNaN() || f.isInfinite() ? null : f;
    }
    if (v instanceof Boolean
        || v instanceof Byte
        || v instanceof Short
        || v instanceof Integer
        || v instanceof Long
        || v instanceof String) {
      return v;
    }
    if (v instanceof BigDecimal d) {
      return d.toPlainString();
    }
    if (v instanceof java.sql.Date d) {
      return d.toLocalDate().toString();
    }
    if (v instanceof LocalDate d) {
      return d.toString();
    }
    if (v instanceof java.sql.Timestamp ts) {
      return instant(ts.toInstant());
    }
    if (v instanceof Instant i) {
      return instant(i);
    }
    if (v instanceof LocalDateTime ldt) {
      return LOCAL.format(ldt);
    }
    return null;
  }

  private static String instant(Instant i) {
    return LOCAL.format(LocalDateTime.ofInstant(i, ZoneOffset.UTC)) + "Z";
  }
}
