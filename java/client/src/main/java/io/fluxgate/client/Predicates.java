package io.fluxgate.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * Builds scan filters (PROTOCOL.md §4.4). Values are JSON scalars that the server coerces to the
 * column's type: DECIMAL as a string, DATE as "2026-11-30", TIMESTAMP as ISO-8601 or epoch
 * milliseconds. Results are exact, so a connector can hand a filter to the server entirely.
 */
public final class Predicates {
  private Predicates() {}

  public static JsonNode eq(String column, Object value) {
    return compare("eq", column, value);
  }

  public static JsonNode ne(String column, Object value) {
    return compare("ne", column, value);
  }

  public static JsonNode lt(String column, Object value) {
    return compare("lt", column, value);
  }

  public static JsonNode le(String column, Object value) {
    return compare("le", column, value);
  }

  public static JsonNode gt(String column, Object value) {
    return compare("gt", column, value);
  }

  public static JsonNode ge(String column, Object value) {
    return compare("ge", column, value);
  }

  public static JsonNode in(String column, Object... values) {
    return compare("in", column, values);
  }

  public static JsonNode notIn(String column, Object... values) {
    return compare("not_in", column, values);
  }

  public static JsonNode startsWith(String column, String prefix) {
    return compare("starts_with", column, prefix);
  }

  public static JsonNode isNull(String column) {
    return Json.MAPPER.createObjectNode().put("is_null", column);
  }

  public static JsonNode isNotNull(String column) {
    return Json.MAPPER.createObjectNode().put("is_not_null", column);
  }

  public static JsonNode and(JsonNode... predicates) {
    return combine("and", predicates);
  }

  public static JsonNode or(JsonNode... predicates) {
    return combine("or", predicates);
  }

  public static JsonNode not(JsonNode predicate) {
    ObjectNode node = Json.MAPPER.createObjectNode();
    node.set("not", predicate);
    return node;
  }

  /** A predicate written as JSON, e.g. {"gt": ["amount", "100.00"]}. */
  public static JsonNode parse(String json) {
    return Json.parse(json);
  }

  private static JsonNode compare(String op, String column, Object value) {
    ArrayNode args = Json.MAPPER.createArrayNode();
    args.add(column);
    args.add(Json.MAPPER.valueToTree(value));
    ObjectNode node = Json.MAPPER.createObjectNode();
    node.set(op, args);
    return node;
  }

  private static JsonNode combine(String op, JsonNode[] predicates) {
    ArrayNode args = Json.MAPPER.createArrayNode();
    for (JsonNode p : predicates) {
      args.add(p);
    }
    ObjectNode node = Json.MAPPER.createObjectNode();
    node.set(op, args);
    return node;
  }
}
