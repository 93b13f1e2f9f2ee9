package io.fluxgate.flink.source;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.flink.core.io.SimpleVersionedSerializer;

/**
 * Splits and the enumerator's state in checkpoints: each split's id and state (the ticket with the
 * snapshot's cuts, see {@link BucketSplit}; version 1 held the ticket alone); the enumerator's
 * unassigned splits, then (from version 3) the partitions planned and the next split's number.
 */
public final class BucketSplitSerializer {
  private static final int VERSION = 2;
  private static final int ENUMERATOR_VERSION = 3;

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

  static final SimpleVersionedSerializer<EnumeratorState> ENUMERATOR =
      new SimpleVersionedSerializer<>() {
        @Override
        public int getVersion() {
          return ENUMERATOR_VERSION;
        }

        @Override
        public byte[] serialize(EnumeratorState state) throws IOException {
          ByteArrayOutputStream bytes = new ByteArrayOutputStream();
          try (DataOutputStream out = new DataOutputStream(bytes)) {
            byte[] splits = serializeAll(state.pending());
            out.writeInt(splits.length);
            out.write(splits);
            out.writeInt(state.partitions().size());
            for (long id : state.partitions()) {
              out.writeLong(id);
            }
            out.writeInt(state.nextSplit());
          }
          return bytes.toByteArray();
        }

        @Override
        public EnumeratorState deserialize(int version, byte[] bytes) throws IOException {
          if (version < ENUMERATOR_VERSION) { // the unassigned splits alone, of a plan made once
            List<BucketSplit> pending = deserializeAll(version, bytes);
            return new EnumeratorState(pending, Set.of(), nextAfter(pending));
          }
          if (version != ENUMERATOR_VERSION) {
            throw new IOException(
                "fluxgate enumerator state version " + version + ", want " + ENUMERATOR_VERSION);
          }
          try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes))) {
            byte[] splits = new byte[in.readInt()];
            in.readFully(splits);
            Set<Long> partitions = new HashSet<>();
            for (int n = in.readInt(); n > 0; n--) {
              partitions.add(in.readLong());
            }
            return new EnumeratorState(deserializeAll(VERSION, splits), partitions, in.readInt());
          }
        }
      };

  /** One past the highest split number of splits: no new split may take a number twice. */
  private static int nextAfter(List<BucketSplit> splits) {
    return splits.stream()
            .mapToInt(s -> Integer.parseInt(s.splitId().substring(s.splitId().indexOf('-') + 1)))
            .max()
            .orElse(-1)
        + 1;
  }

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
            version == 1 ? BucketSplit.of(id, state, List.of()) : BucketSplit.fromState(id, state));
      }
      return splits;
    }
  }
}
