package io.fluxgate.flink;

import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SinkWriter;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.table.data.RowData;

/** A Sink V2 into a fluxgate table, one DoPut stream per subtask. */
final class FluxgateSink implements Sink<RowData> {
  private final Connection connection;
  private final SinkSpec spec;

  FluxgateSink(Connection connection, SinkSpec spec) {
    this.connection = connection;
    this.spec = spec;
  }

  @Override
  public SinkWriter<RowData> createWriter(WriterInitContext context) {
    return new FluxgateWriter(connection, spec, context.getProcessingTimeService());
  }
}
