package io.fluxgate.flink;

import io.fluxgate.flink.catalog.RbFunctions;
import java.io.IOException;
import org.apache.flink.api.common.typeutils.SimpleTypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.base.TypeSerializerSingleton;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

/** Keeps the rb_*_agg accumulators in Flink state: a flag, then the portable serialization. */
public final class AccumulatorSerializer extends TypeSerializerSingleton<RbFunctions.Accumulator> {
  private static final long serialVersionUID = 1L;

  @Override
  public boolean isImmutableType() {
    return false;
  }

  @Override
  public RbFunctions.Accumulator createInstance() {
    return new RbFunctions.Accumulator();
  }

  @Override
  public RbFunctions.Accumulator copy(RbFunctions.Accumulator from) {
    RbFunctions.Accumulator to = new RbFunctions.Accumulator();
    to.bitmap = from.bitmap == null ? null : from.bitmap.clone();
    return to;
  }

  @Override
  public RbFunctions.Accumulator copy(RbFunctions.Accumulator from, RbFunctions.Accumulator reuse) {
    return copy(from);
  }

  @Override
  public int getLength() {
    return -1;
  }

  @Override
  public void serialize(RbFunctions.Accumulator acc, DataOutputView out) throws IOException {
    if (acc.bitmap == null) {
      out.writeInt(-1);
      return;
    }
    byte[] bytes = Bitmaps.toBytes(acc.bitmap);
    out.writeInt(bytes.length);
    out.write(bytes);
  }

  @Override
  public RbFunctions.Accumulator deserialize(DataInputView in) throws IOException {
    RbFunctions.Accumulator acc = new RbFunctions.Accumulator();
    int length = in.readInt();
    if (length >= 0) {
      byte[] bytes = new byte[length];
      in.readFully(bytes);
      acc.bitmap = Bitmaps.fromBytes(bytes);
    }
    return acc;
  }

  @Override
  public RbFunctions.Accumulator deserialize(RbFunctions.Accumulator reuse, DataInputView in)
      throws IOException {
    return deserialize(in);
  }

  @Override
  public void copy(DataInputView in, DataOutputView out) throws IOException {
    int length = in.readInt();
    out.writeInt(length);
    if (length > 0) {
      out.write(in, length);
    }
  }

  @Override
  public TypeSerializerSnapshot<RbFunctions.Accumulator> snapshotConfiguration() {
    return new Snapshot();
  }

  /** The serializer has no configuration: any version restores with it. */
  public static final class Snapshot extends SimpleTypeSerializerSnapshot<RbFunctions.Accumulator> {
    public Snapshot() {
      super(AccumulatorSerializer::new);
    }
  }
}
