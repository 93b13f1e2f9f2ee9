package io.fluxgate.flink;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * Splits and the enumerator's unassigned splits in checkpoints: id and state (the ticket with the
 * snapshot's cuts, see {@link BucketSplit}); version 1 held the ticket alone.
 */
final class BucketSplitSerializer {
  private static final int VERSION = 2;

  private BucketSplitSerializer() {}

  static final SimpleVersionedSerializer<BucketSplit> SPLIT =
      new SimpleVersionedSerializer<>() {
        @Override
        public int getVersion() {
          return VERSION;
        }

        @Override
        public byte[] serialize(BucketSplit split) throws IOException {
          return serializeAll(List.of(split));
        }

        @Override
        public BucketSplit deserialize(int version, byte[] bytes) throws IOException {
          return deserializeAll(version, bytes).get(0);
        }
      };

  static final SimpleVersionedSerializer<List<BucketSplit>> SPLITS =
      new SimpleVersionedSerializer<>() {
        @Override
        public int getVersion() {
          return VERSION;
        }

        @Override
        public byte[] serialize(List<BucketSplit> splits) throws IOException {
          return serializeAll(splits);
        }

        @Override
        public List<BucketSplit> deserialize(int version, byte[] bytes) throws IOException {
          return deserializeAll(version, bytes);
        }
      };

  private static byte[] serializeAll(List<BucketSplit> splits) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(splits.size());
      for (BucketSplit s : splits) {
        out.writeUTF(s.splitId());
        byte[] state = s.state();
        out.writeInt(state.length);
        out.write(state);
      }
    }
    return bytes.toByteArray();
  }

  private static List<BucketSplit> deserializeAll(int version, byte[] bytes) throws IOException {
    if (version != 1 && version != VERSION) {
      throw new IOException("fluxgate split state version " + version + ", want " + VERSION);
    }
    try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
      int n = in.readInt();
      List<BucketSplit> splits = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        String id = in.readUTF();
        byte[] state = new byte[in.readInt()];
        in.readFully(state);
        splits.add(
            version == 1 ? new BucketSplit(id, state, List.of()) : BucketSplit.fromState(id, state));
      }
      return splits;
    }
  }
}
