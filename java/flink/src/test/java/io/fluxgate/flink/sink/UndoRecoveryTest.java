package io.fluxgate.flink.sink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

public class UndoRecoveryTest {
  /** The buckets a subtask owns follow from the parallelism: a rescaled restore cannot undo. */
  @Test
  void aRestoreWithAnotherParallelismIsRefusedBeforeAnythingIsUndone() {
    SinkState checkpointed = new SinkState(2, Map.of("", Map.of(0, 10L, 2, 4L)));
    IllegalStateException e =
        assertThrows(
            IllegalStateException.class,
            () ->
                UndoRecovery.recover(
                    null, "fluss.t", false, "job", 0, 3, 4, List.of(checkpointed)));
    assertTrue(e.getMessage().contains("restore it with 2"), e.getMessage());
  }

  @Test
  void stateRoundTrips() throws Exception {
    SinkState state =
        new SinkState(3, Map.of("20261201", Map.of(0, 10L, 3, 7L), "20261202", Map.of(0, 2L)));
    SinkState.Serializer s = new SinkState.Serializer();
    assertEquals(state, s.deserialize(s.getVersion(), s.serialize(state)));
    // A version-1 state (before partitions) is the one partition of a table without any.
    byte[] v1 = {0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0, 9};
    assertEquals(new SinkState(2, Map.of("", Map.of(3, 9L))), s.deserialize(1, v1));
    SinkCheckpoint c = new SinkCheckpoint("job-é", 3);
    SinkCheckpoint.Serializer cs = new SinkCheckpoint.Serializer();
    assertEquals(c, cs.deserialize(cs.getVersion(), cs.serialize(c)));
  }
}
