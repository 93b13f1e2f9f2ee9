package io.fluxgate.flink.sink;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * A sink subtask's checkpointed state for undo recovery: the log end offset, at the checkpoint, of
 * each bucket the subtask owns, per partition name ({@link #UNPARTITIONED} on a table without
 * partitions).
 *
 * @param parallelism the sink's parallelism then, which decides the buckets a subtask owns
 */
public record SinkState(int parallelism, Map<String, Map<Integer, Long>> offsets) {
  /** The partition name of a table without partitions. */
  static final String UNPARTITIONED = "";

  /** A copy of offsets whose maps are new and mutable. */
  static Map<String, Map<Integer, Long>> copy(Map<String, Map<Integer, Long>> offsets) {
    Map<String, Map<Integer, Long>> out = new HashMap<>();
    offsets.forEach((p, o) -> out.put(p, new HashMap<>(o)));
    return out;
  }

  static final class Serializer implements SimpleVersionedSerializer<SinkState> {
    @Override
    public int getVersion() {
      return 2;
    }

    @Override
    public byte[] serialize(SinkState state) throws IOException {
      DataOutputSerializer out = new DataOutputSerializer(64);
      out.writeInt(state.parallelism);
      out.writeInt(state.offsets.size());
      for (Map.Entry<String, Map<Integer, Long>> p : state.offsets.entrySet()) {
        out.writeUTF(p.getKey());
        writeBuckets(out, p.getValue());
      }
      return out.getCopyOfBuffer();
    }

    @Override
    public SinkState deserialize(int version, byte[] bytes) throws IOException {
      DataInputDeserializer in = new DataInputDeserializer(bytes);
      int parallelism = in.readInt();
      Map<String, Map<Integer, Long>> offsets = new HashMap<>();
      switch (version) {
        case 1 -> offsets.put(UNPARTITIONED, readBuckets(in)); // before partitions
        case 2 -> {
          int n = in.readInt();
          for (int i = 0; i < n; i++) {
            offsets.put(in.readUTF(), readBuckets(in));
          }
        }
        default -> throw new IOException("fluxgate sink state version " + version + " is unknown");
      }
      return new SinkState(parallelism, offsets);
    }

    private static void writeBuckets(DataOutputSerializer out, Map<Integer, Long> offsets)
        throws IOException {
      out.writeInt(offsets.size());
      for (Map.Entry<Integer, Long> e : offsets.entrySet()) {
        out.writeInt(e.getKey());
        out.writeLong(e.getValue());
      }
    }

    private static Map<Integer, Long> readBuckets(DataInputDeserializer in) throws IOException {
      int n = in.readInt();
      Map<Integer, Long> offsets = new HashMap<>();
      for (int i = 0; i < n; i++) {
        offsets.put(in.readInt(), in.readLong());
      }
      return offsets;
    }
  }
}
