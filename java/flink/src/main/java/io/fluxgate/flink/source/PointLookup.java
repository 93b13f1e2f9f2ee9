package io.fluxgate.flink.source;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.apache.flink.table.expressions.ResolvedExpression;

/**
 * Fluss's batch rule: {@code WHERE <pk> = <const>} over the whole primary key is a point lookup
 * (PROTOCOL.md §6.3, the inline lookup of GetFlightInfo), not a scan.
 *
 * @param key the key as a JSON object of the key columns, values as in filters
 * @param used the filters the lookup answers exactly; the rest stay in Flink
 */
public record PointLookup(String key, List<ResolvedExpression> used) {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The lookup the conjuncts make, if they fix every key column to one literal. */
  static Optional<PointLookup> of(List<String> keyColumns, List<ResolvedExpression> conjuncts) {
    ObjectNode key = JSON.createObjectNode();
    List<ResolvedExpression> used = new ArrayList<>();
    for (ResolvedExpression e : conjuncts) {
      JsonNode eq = FilterTranslator.translate(e).map(p -> p.get("eq")).orElse(null);
      if (eq != null && keyColumns.contains(eq.get(0).asText()) && !key.has(eq.get(0).asText())) {
        key.set(eq.get(0).asText(), eq.get(1));
        used.add(e);
      }
    }
    return key.size() == keyColumns.size() && !keyColumns.isEmpty()
        ? Optional.of(new PointLookup(key.toString(), used))
        : Optional.empty();
  }
}
