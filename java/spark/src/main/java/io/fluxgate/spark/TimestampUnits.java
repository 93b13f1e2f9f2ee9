package io.fluxgate.spark;

import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;

/**
 * Copies a top-level timestamp column into another unit: Spark reads and writes microseconds, a
 * TIMESTAMP(3) column is milliseconds on the wire. Other columns need no copy.
 */
final class TimestampUnits {
  private TimestampUnits() {}

  /**
   * A new vector of field target holding from's values in target's unit (floor when coarser). Fails
   * for a nested timestamp of another unit, which this connector does not convert.
   */
  static FieldVector convert(FieldVector from, Field target, BufferAllocator allocator) {
    if (!(from instanceof TimeStampVector src)
        || !(target.getType() instanceof ArrowType.Timestamp to)) {
      throw new UnsupportedOperationException(
          "column "
              + from.getField().getName()
              + ": a timestamp of unit other than microseconds inside "
              + from.getField().getType()
              + " is not supported by the Spark connector");
    }
    long fromPerSecond = perSecond(((ArrowType.Timestamp) from.getField().getType()).getUnit());
    long toPerSecond = perSecond(to.getUnit());
    TimeStampVector out = (TimeStampVector) target.createVector(allocator);
    int n = from.getValueCount();
    out.allocateNew(n);
    for (int i = 0; i < n; i++) {
      if (src.isNull(i)) {
        out.setNull(i);
      } else {
        long v = src.get(i);
        out.set(
            i,
            toPerSecond >= fromPerSecond
                ? v * (toPerSecond / fromPerSecond)
                : Math.floorDiv(v, fromPerSecond / toPerSecond));
      }
    }
    out.setValueCount(n);
    return out;
  }

  private static long perSecond(TimeUnit unit) {
    return switch (unit) {
      case SECOND -> 1L;
      case MILLISECOND -> 1_000L;
      case MICROSECOND -> 1_000_000L;
      case NANOSECOND -> 1_000_000_000L;
    };
  }
}
