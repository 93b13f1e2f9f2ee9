package io.fluxgate.flink.sink;

import io.fluxgate.client.ConnectionSettings;
import io.fluxgate.client.FluxgateClient;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.apache.flink.streaming.api.connector.sink2.CommittableMessage;
import org.apache.flink.streaming.api.connector.sink2.CommittableWithLineage;
import org.apache.flink.streaming.api.operators.AbstractStreamOperator;
import org.apache.flink.streaming.api.operators.BoundedOneInput;
import org.apache.flink.streaming.api.operators.OneInputStreamOperator;
import org.apache.flink.streaming.runtime.streamrecord.StreamRecord;

/**
 * Deletes the producer offsets an undo-recovery sink registered at its start, once every subtask's
 * {@link SinkCheckpoint} of one checkpoint has been committed: from then on a restore undoes back
 * to checkpointed state, not to the start. Committables come after the checkpoint completed. At the
 * end of all input every writer has finished, so they go too (a streaming job commits the end's
 * committables only at a final checkpoint, which may never come). Runs with parallelism 1.
 */
public final class ProducerOffsetsCleaner extends AbstractStreamOperator<Void>
    implements OneInputStreamOperator<CommittableMessage<SinkCheckpoint>, Void>, BoundedOneInput {
  private final ConnectionSettings connection;
  private final String table;
  private final String producerId; // null: the job id
  private final Map<Long, Set<Integer>> arrived = new HashMap<>();
  private boolean deleted;

  ProducerOffsetsCleaner(ConnectionSettings connection, String table, String producerId) {
    this.connection = connection;
    this.table = table;
    this.producerId = producerId;
  }

  @Override
  public void processElement(StreamRecord<CommittableMessage<SinkCheckpoint>> record) {
    if (deleted || !(record.getValue() instanceof CommittableWithLineage<SinkCheckpoint> c)) {
      return;
    }
    Set<Integer> subtasks = arrived.computeIfAbsent(c.getCheckpointId(), k -> new HashSet<>());
    subtasks.add(c.getSubtaskId());
    if (subtasks.size() == c.getCommittable().subtasks()) {
      delete();
    }
  }

  @Override
  public void endInput() {
    if (!deleted) {
      delete();
    }
  }

  private void delete() {
    String producer =
        producerId != null ? producerId : getRuntimeContext().getJobInfo().getJobId().toString();
    try (FluxgateClient client = connection.connect()) {
      client.deleteProducerOffsets(producer, table);
    }
    deleted = true;
    arrived.clear();
  }
}
