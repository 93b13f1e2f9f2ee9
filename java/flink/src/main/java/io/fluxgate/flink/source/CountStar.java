package io.fluxgate.flink.source;

import io.fluxgate.client.ConnectionSettings;
import io.fluxgate.client.FluxgateClient;
import java.io.Serializable;
import java.util.List;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.connector.ProviderContext;
import org.apache.flink.table.connector.source.DataStreamScanProvider;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.expressions.AggregateExpression;

/**
 * {@code COUNT(*)} answered by the server, not by a scan ({@link FluxgateClient#rowCount}): a log
 * table's rows are its retained offsets, a primary-key table's current rows are counted by the
 * server as they are written. Counted when the job is built, as a bounded scan fixes its stop
 * offsets then. The one row is a GenericRowData: there is no batch to be columnar over.
 */
public record CountStar(ConnectionSettings connection, String table) implements Serializable {

  /** Whether the aggregates are one COUNT(*) (or COUNT(1)) with no grouping. */
  static boolean is(List<int[]> groupingSets, List<AggregateExpression> aggregates) {
    if (groupingSets.size() != 1 || groupingSets.get(0).length != 0 || aggregates.size() != 1) {
      return false;
    }
    AggregateExpression a = aggregates.get(0);
    // The planner's own classes (behind Flink's planner loader): known by name only.
    String function = a.getFunctionDefinition().getClass().getSimpleName();
    return a.getArgs().isEmpty()
        && !a.isDistinct()
        && a.getFilterExpression().isEmpty()
        && (function.equals("Count1AggFunction") || function.equals("CountAggFunction"));
  }

  long count() {
    try (FluxgateClient client = connection.connect()) {
      return client
          .rowCount(table)
          .orElseThrow(
              () -> new IllegalStateException("the server keeps no row count of " + table));
    }
  }

  DataStreamScanProvider provider(TypeInformation<RowData> type) {
    return new DataStreamScanProvider() {
      @Override
      public DataStream<RowData> produceDataStream(
          ProviderContext context, StreamExecutionEnvironment env) {
        return env.fromData(type, (RowData) GenericRowData.of(count()));
      }

      @Override
      public boolean isBounded() {
        return true;
      }
    };
  }
}
