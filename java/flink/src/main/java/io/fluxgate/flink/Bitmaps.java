package io.fluxgate.flink;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import org.roaringbitmap.RoaringBitmap;

/**
 * The rb_* functions' values: 32-bit RoaringBitmaps in the portable serialization, what fluxgate
 * stores in rbm32 columns (PROTOCOL.md §5.1) and Fluss's functions read and write.
 */
public final class Bitmaps {
  private Bitmaps() {}

  public static byte[] toBytes(RoaringBitmap bitmap) {
    bitmap.runOptimize();
    ByteBuffer out = ByteBuffer.allocate(bitmap.serializedSizeInBytes());
    bitmap.serialize(out);
    return out.array();
  }

  public static RoaringBitmap fromBytes(byte[] bytes) {
    RoaringBitmap bitmap = new RoaringBitmap();
    try {
      bitmap.deserialize(ByteBuffer.wrap(bytes));
    } catch (IOException e) {
      throw new UncheckedIOException("not a portable 32-bit RoaringBitmap", e);
    }
    return bitmap;
  }
}
