package io.fluxgate.flink.source;

import com.fasterxml.jackson.databind.JsonNode;
import io.fluxgate.client.Predicates;
import java.math.BigDecimal;
import java.time.Instant;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.flink.table.expressions.CallExpression;
import org.apache.flink.table.expressions.FieldReferenceExpression;
import org.apache.flink.table.expressions.ResolvedExpression;
import org.apache.flink.table.expressions.ValueLiteralExpression;
import org.apache.flink.table.functions.BuiltInFunctionDefinitions;
import org.apache.flink.table.functions.FunctionDefinition;
import org.apache.flink.table.types.logical.LogicalTypeFamily;

/**
 * Translates Flink filter expressions to fluxgate predicates (PROTOCOL.md §4.4). fluxgate filters
 * exactly, so a translated filter is accepted whole; what does not translate stays in Flink.
 */
public final class FilterTranslator {
  private FilterTranslator() {}

  static Optional<JsonNode> translate(ResolvedExpression e) {
    if (!(e instanceof CallExpression call)) {
      return Optional.empty();
    }
    FunctionDefinition f = call.getFunctionDefinition();
    List<ResolvedExpression> args = call.getResolvedChildren();
    if (f == BuiltInFunctionDefinitions.AND || f == BuiltInFunctionDefinitions.OR) {
      List<JsonNode> parts = new ArrayList<>();
      for (ResolvedExpression a : args) {
        Optional<JsonNode> p = translate(a);
        if (p.isEmpty()) {
          return Optional.empty();
        }
        parts.add(p.get());
      }
      JsonNode[] array = parts.toArray(JsonNode[]::new);
      return Optional.of(
          f == BuiltInFunctionDefinitions.AND ? Predicates.and(array) : Predicates.or(array));
    }
    if (f == BuiltInFunctionDefinitions.NOT) {
      return translate(args.get(0)).map(Predicates::not);
    }
    if (f == BuiltInFunctionDefinitions.IS_NULL || f == BuiltInFunctionDefinitions.IS_NOT_NULL) {
      if (!(args.get(0) instanceof FieldReferenceExpression field)) {
        return Optional.empty();
      }
      return Optional.of(
          f == BuiltInFunctionDefinitions.IS_NULL
              ? Predicates.isNull(field.getName())
              : Predicates.isNotNull(field.getName()));
    }
    if (args.size() != 2) {
      return Optional.empty();
    }
    boolean flipped = args.get(0) instanceof ValueLiteralExpression;
    if (!((flipped ? args.get(1) : args.get(0)) instanceof FieldReferenceExpression field)
        || !((flipped ? args.get(0) : args.get(1)) instanceof ValueLiteralExpression literal)) {
      return Optional.empty();
    }
    Optional<Object> value = value(literal);
    if (value.isEmpty()) {
      return Optional.empty();
    }
    String col = field.getName();
    Object v = value.get();
    if (f == BuiltInFunctionDefinitions.EQUALS) {
      return Optional.of(Predicates.eq(col, v));
    } else if (f == BuiltInFunctionDefinitions.NOT_EQUALS) {
      return Optional.of(Predicates.ne(col, v));
    } else if (f == BuiltInFunctionDefinitions.LESS_THAN) {
      return Optional.of(flipped ? Predicates.gt(col, v) : Predicates.lt(col, v));
    } else if (f == BuiltInFunctionDefinitions.LESS_THAN_OR_EQUAL) {
      return Optional.of(flipped ? Predicates.ge(col, v) : Predicates.le(col, v));
    } else if (f == BuiltInFunctionDefinitions.GREATER_THAN) {
      return Optional.of(flipped ? Predicates.lt(col, v) : Predicates.gt(col, v));
    } else if (f == BuiltInFunctionDefinitions.GREATER_THAN_OR_EQUAL) {
      return Optional.of(flipped ? Predicates.le(col, v) : Predicates.ge(col, v));
    }
    return Optional.empty();
  }

  /** The literal as a JSON scalar the server coerces (§4.4); empty for NULL and other types. */
  private static Optional<Object> value(ValueLiteralExpression literal) {
    if (literal.isNull()) {
      return Optional.empty(); // a comparison with NULL is never true: Flink folds it itself
    }
    var type = literal.getOutputDataType().getLogicalType();
    if (type.is(LogicalTypeFamily.CHARACTER_STRING)) {
      return literal.getValueAs(String.class).map(s -> s);
    }
    switch (type.getTypeRoot()) {
      case BOOLEAN:
        return literal.getValueAs(Boolean.class).map(b -> b);
      case TINYINT:
        return literal.getValueAs(Byte.class).map(b -> b);
      case SMALLINT:
        return literal.getValueAs(Short.class).map(v -> v);
      case INTEGER:
        return literal.getValueAs(Integer.class).map(v -> v);
      case BIGINT:
        return literal.getValueAs(Long.class).map(v -> v);
      case FLOAT:
        return literal.getValueAs(Float.class).map(v -> v);
      case DOUBLE:
        return literal.getValueAs(Double.class).map(v -> v);
      case DECIMAL:
        return literal.getValueAs(BigDecimal.class).map(BigDecimal::toPlainString);
      case DATE:
        return literal.getValueAs(LocalDate.class).map(LocalDate::toString);
      case TIMESTAMP_WITHOUT_TIME_ZONE:
        return literal.getValueAs(LocalDateTime.class).map(LocalDateTime::toString);
      case TIMESTAMP_WITH_LOCAL_TIME_ZONE:
        return literal.getValueAs(Instant.class).map(Instant::toString);
      default:
        return Optional.empty(); // TIME, BINARY, nested: not fluxgate filter values
    }
  }
}
