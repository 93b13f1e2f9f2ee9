package io.fluxgate.flink.sink;

import java.io.IOException;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

/**
 * The committable of an undo-recovery sink: one subtask's writes up to a checkpoint (or the end of
 * a bounded input) are covered. Once every subtask's arrived for one checkpoint, the producer
 * offsets registered at the start are no longer needed ({@link ProducerOffsetsCleaner}).
 */
public record SinkCheckpoint(String producerId, int subtasks) {

  static final class Serializer implements SimpleVersionedSerializer<SinkCheckpoint> {
    @Override
    public int getVersion() {
      return 1;
    }

    @Override
    public byte[] serialize(SinkCheckpoint c) throws IOException {
      DataOutputSerializer out = new DataOutputSerializer(64);
      out.writeUTF(c.producerId);
      out.writeInt(c.subtasks);
      return out.getCopyOfBuffer();
    }

    @Override
    public SinkCheckpoint deserialize(int version, byte[] bytes) throws IOException {
      if (version != 1) {
        throw new IOException("fluxgate sink committable version " + version + " is unknown");
      }
      DataInputDeserializer in = new DataInputDeserializer(bytes);
      return new SinkCheckpoint(in.readUTF(), in.readInt());
    }
  }
}
