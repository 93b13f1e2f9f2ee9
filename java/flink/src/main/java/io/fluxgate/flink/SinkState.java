package io.fluxgate.flink;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * A sink subtask's checkpointed state for undo recovery: the log end offset, at the checkpoint, of
 * each bucket the subtask owns.
 *
 * @param parallelism the sink's parallelism then, which decides the buckets a subtask owns
 */
record SinkState(int parallelism, Map<Integer, Long> offsets) {

  static final class Serializer implements SimpleVersionedSerializer<SinkState> {
    @Override
    public int getVersion() {
      return 1;
    }

    @Override
    public byte[] serialize(SinkState state) throws IOException {
      DataOutputSerializer out = new DataOutputSerializer(16 + 12 * state.offsets.size());
      out.writeInt(state.parallelism);
      out.writeInt(state.offsets.size());
      for (Map.Entry<Integer, Long> e : state.offsets.entrySet()) {
        out.writeInt(e.getKey());
        out.writeLong(e.getValue());
      }
      return out.getCopyOfBuffer();
    }

    @Override
    public SinkState deserialize(int version, byte[] bytes) throws IOException {
      if (version != 1) {
        throw new IOException("fluxgate sink state version " + version + " is unknown");
      }
      DataInputDeserializer in = new DataInputDeserializer(bytes);
      int parallelism = in.readInt();
      int n = in.readInt();
      Map<Integer, Long> offsets = new HashMap<>();
      for (int i = 0; i < n; i++) {
        offsets.put(in.readInt(), in.readLong());
      }
      return new SinkState(parallelism, offsets);
    }
  }
}
