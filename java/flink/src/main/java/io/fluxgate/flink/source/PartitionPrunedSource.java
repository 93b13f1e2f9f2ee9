package io.fluxgate.flink.source;

import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.PartitionInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.flink.table.connector.source.DynamicTableSource;
import org.apache.flink.table.connector.source.abilities.SupportsPartitionPushDown;
import org.apache.flink.table.expressions.FieldReferenceExpression;
import org.apache.flink.table.expressions.ResolvedExpression;

/**
 * A batch read of a partitioned table, whose partitions the planner prunes by the query's filter on
 * partition columns (EXPLAIN shows them as partitions=[...]); the scan then plans only those.
 */
public final class PartitionPrunedSource extends FluxgateTableSource
    implements SupportsPartitionPushDown {

  PartitionPrunedSource(FluxgateTableSource source) {
    super(source);
  }

  @Override
  public Optional<List<Map<String, String>>> listPartitions() {
    try (FluxgateClient client = connection().connect()) {
      List<Map<String, String>> out = new ArrayList<>();
      for (PartitionInfo p : client.listPartitions(tableName().base())) {
        out.add(p.spec());
      }
      return Optional.of(out);
    }
  }

  @Override
  public void applyPartitions(List<Map<String, String>> remaining) {
    List<String> names = new ArrayList<>();
    for (Map<String, String> spec : remaining) {
      // A partition's name: its values joined by '$' in partition-key order.
      names.add(String.join("$", partitionKeys.stream().map(spec::get).toList()));
    }
    partitions = names;
  }

  @Override
  boolean prunedByPlanner(ResolvedExpression filter) {
    List<String> columns = new ArrayList<>();
    collectColumns(filter, columns);
    return !columns.isEmpty() && partitionKeys.containsAll(columns);
  }

  private static void collectColumns(ResolvedExpression e, List<String> out) {
    if (e instanceof FieldReferenceExpression f) {
      out.add(f.getName());
    }
    e.getResolvedChildren().forEach(c -> collectColumns(c, out));
  }

  @Override
  public DynamicTableSource copy() {
    return new PartitionPrunedSource(this);
  }
}
