package io.fluxgate.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.TypeLayout;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.ipc.message.ArrowFieldNode;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.FieldType;

/**
 * The Arrow form Spark reads and writes, and the moves between it and the table's. Spark's Arrow
 * vectors know timestamps in microseconds only, and Spark 4.0 has no TIME type: a timestamp of
 * another unit is in microseconds in Spark's form, and a TIME is a BIGINT of nanoseconds since
 * midnight (lossless for every precision, and the value Spark 4.1's TIME type holds). Everything
 * else, at any depth, is the same.
 */
final class SparkForm {
  private static final ArrowType.Int INT64 = new ArrowType.Int(64, true);

  private SparkForm() {}

  /** The field with every timestamp and time, at any depth, in Spark's form. */
  static Field of(Field field) {
    List<Field> children = new ArrayList<>();
    for (Field c : field.getChildren()) {
      children.add(of(c));
    }
    FieldType ft =
        new FieldType(
            field.isNullable(), of(field.getType()), field.getDictionary(), field.getMetadata());
    return new Field(field.getName(), ft, children);
  }

  private static ArrowType of(ArrowType type) {
    if (type instanceof ArrowType.Timestamp ts && ts.getUnit() != TimeUnit.MICROSECOND) {
      return new ArrowType.Timestamp(TimeUnit.MICROSECOND, ts.getTimezone());
    }
    return type instanceof ArrowType.Time ? INT64 : type;
  }

  /**
   * Whether the field is in Spark's form already, so its vectors are read and written as they are.
   */
  static boolean is(Field field) {
    if (of(field.getType()) != field.getType()) {
      return false;
    }
    for (Field c : field.getChildren()) {
      if (!is(c)) {
        return false;
      }
    }
    return true;
  }

  /**
   * Loads into root the values of from, which holds the same columns in the other form (the table's
   * or Spark's): every buffer is shared except the values of a timestamp or time column, which are
   * copied in the other unit (the floor when it is coarser). Valid until from changes.
   */
  static void load(
      List<FieldVector> from, int rowCount, VectorSchemaRoot into, BufferAllocator allocator) {
    List<Field> fields = new ArrayList<>();
    from.forEach(v -> fields.add(v.getField()));
    VectorSchemaRoot view =
        new VectorSchemaRoot(fields, from, rowCount); // not closed: owns nothing
    List<ArrowBuf> copies = new ArrayList<>();
    try (ArrowRecordBatch stored = new VectorUnloader(view).getRecordBatch()) {
      List<ArrowBuf> buffers = new ArrayList<>(stored.getBuffers());
      Cursor at = new Cursor();
      for (int i = 0; i < fields.size(); i++) {
        convert(
            fields.get(i),
            into.getSchema().getFields().get(i),
            stored,
            buffers,
            at,
            copies,
            allocator);
      }
      try (ArrowRecordBatch converted =
          new ArrowRecordBatch(rowCount, stored.getNodes(), buffers)) {
        new VectorLoader(into).load(converted);
      }
    } finally {
      copies.forEach(ArrowBuf::close);
    }
  }

  /** Where the depth-first walk is in the batch's nodes and buffers. */
  private static final class Cursor {
    int node;
    int buffer;
  }

  private static void convert(
      Field from,
      Field to,
      ArrowRecordBatch stored,
      List<ArrowBuf> buffers,
      Cursor at,
      List<ArrowBuf> copies,
      BufferAllocator allocator) {
    ArrowFieldNode node = stored.getNodes().get(at.node++);
    if (!from.getType().equals(to.getType())) {
      int values = at.buffer + 1; // after the validity buffer, as in every fixed-width layout
      ArrowBuf copy =
          rescale(buffers.get(values), node.getLength(), from.getType(), to.getType(), allocator);
      copies.add(copy);
      buffers.set(values, copy);
    }
    at.buffer += TypeLayout.getTypeBufferCount(from.getType());
    for (int i = 0; i < from.getChildren().size(); i++) {
      convert(
          from.getChildren().get(i),
          to.getChildren().get(i),
          stored,
          buffers,
          at,
          copies,
          allocator);
    }
  }

  /**
   * The n values of buf, of type from, in type to; null slots hold whatever they held, rescaled.
   */
  private static ArrowBuf rescale(
      ArrowBuf buf, int n, ArrowType from, ArrowType to, BufferAllocator allocator) {
    long fromTicks = ticksPerSecond(from);
    long toTicks = ticksPerSecond(to);
    int fromWidth = width(from);
    int toWidth = width(to);
    ArrowBuf out = allocator.buffer((long) n * toWidth);
    for (int i = 0; i < n; i++) {
      long v = fromWidth == 4 ? buf.getInt((long) i * 4) : buf.getLong((long) i * 8);
      long w =
          toTicks >= fromTicks ? v * (toTicks / fromTicks) : Math.floorDiv(v, fromTicks / toTicks);
      if (toWidth == 4) {
        out.setInt((long) i * 4, (int) w);
      } else {
        out.setLong((long) i * 8, w);
      }
    }
    out.writerIndex((long) n * toWidth);
    return out;
  }

  /** Ticks per second of a timestamp or time; Spark's BIGINT form of a time is nanoseconds. */
  private static long ticksPerSecond(ArrowType type) {
    TimeUnit unit;
    if (type instanceof ArrowType.Timestamp ts) {
      unit = ts.getUnit();
    } else if (type instanceof ArrowType.Time t) {
      unit = t.getUnit();
    } else {
      unit = TimeUnit.NANOSECOND;
    }
    return switch (unit) {
      case SECOND -> 1L;
      case MILLISECOND -> 1_000L;
      case MICROSECOND -> 1_000_000L;
      case NANOSECOND -> 1_000_000_000L;
    };
  }

  private static int width(ArrowType type) {
    return type instanceof ArrowType.Time t ? t.getBitWidth() / 8 : 8;
  }
}
