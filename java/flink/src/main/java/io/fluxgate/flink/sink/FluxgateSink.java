package io.fluxgate.flink.sink;

import io.fluxgate.client.ConnectionSettings;
import java.io.IOException;
import java.util.Collection;
import java.util.List;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.sink2.Committer;
import org.apache.flink.api.connector.sink2.CommitterInitContext;
import org.apache.flink.api.connector.sink2.Sink;
import org.apache.flink.api.connector.sink2.SupportsCommitter;
import org.apache.flink.api.connector.sink2.SupportsWriterState;
import org.apache.flink.api.connector.sink2.WriterInitContext;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.SupportsPostCommitTopology;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.table.data.RowData;

/**
 * A Sink V2 into a fluxgate table, one DoPut stream per subtask. With undo recovery the writers
 * checkpoint their buckets' offsets, and their committables, once committed by every subtask,
 * delete the producer offsets of the start ({@link ProducerOffsetsCleaner}); the committer itself
 * has nothing to commit: every batch is durable once acknowledged.
 */
public final class FluxgateSink
    implements Sink<RowData>,
        SupportsWriterState<RowData, SinkState>,
        SupportsCommitter<SinkCheckpoint>,
        SupportsPostCommitTopology<SinkCheckpoint> {
  private final ConnectionSettings connection;
  private final SinkSpec spec;

  FluxgateSink(ConnectionSettings connection, SinkSpec spec) {
    this.connection = connection;
    this.spec = spec;
  }

  @Override
  public FluxgateWriter createWriter(WriterInitContext context) throws IOException {
    return restoreWriter(context, List.of());
  }

  @Override
  public FluxgateWriter restoreWriter(WriterInitContext context, Collection<SinkState> restored)
      throws IOException {
    return new FluxgateWriter(connection, spec, context, restored);
  }

  @Override
  public SimpleVersionedSerializer<SinkState> getWriterStateSerializer() {
    return new SinkState.Serializer();
  }

  @Override
  public Committer<SinkCheckpoint> createCommitter(CommitterInitContext context) {
    return new Committer<>() {
      @Override
      public void commit(Collection<CommitRequest<SinkCheckpoint>> requests) {}

      @Override
      public void close() {}
    };
  }

  @Override
  public SimpleVersionedSerializer<SinkCheckpoint> getCommittableSerializer() {
    return new SinkCheckpoint.Serializer();
  }

  @Override
  public void addPostCommitTopology(DataStream<CommittableMessage<SinkCheckpoint>> committables) {
    if (!spec.undo()) {
      return;
    }
    committables
        .global()
        .transform(
            "fluxgate producer offsets of " + spec.table(),
            Types.VOID,
            new ProducerOffsetsCleaner(connection, spec.table(), spec.producerId()))
        .setParallelism(1)
        .sinkTo(new DiscardingSink<>())
        .setParallelism(1);
  }
}
