package io.fluxgate.flink;

import java.util.List;
import org.apache.arrow.vector.BaseVariableWidthVector;
import org.apache.arrow.vector.BigIntVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.DateDayVector;
import org.apache.arrow.vector.DecimalVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.Float4Vector;
import org.apache.arrow.vector.Float8Vector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.SmallIntVector;
import org.apache.arrow.vector.TimeMicroVector;
import org.apache.arrow.vector.TimeMilliVector;
import org.apache.arrow.vector.TimeNanoVector;
import org.apache.arrow.vector.TimeStampVector;
import org.apache.arrow.vector.TinyIntVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.flink.table.data.ArrayData;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.MapData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.data.columnar.ColumnarArrayData;
import org.apache.flink.table.data.columnar.ColumnarMapData;
import org.apache.flink.table.data.columnar.ColumnarRowData;
import org.apache.flink.table.data.columnar.vector.ArrayColumnVector;
import org.apache.flink.table.data.columnar.vector.BooleanColumnVector;
import org.apache.flink.table.data.columnar.vector.ByteColumnVector;
import org.apache.flink.table.data.columnar.vector.BytesColumnVector;
import org.apache.flink.table.data.columnar.vector.ColumnVector;
import org.apache.flink.table.data.columnar.vector.DecimalColumnVector;
import org.apache.flink.table.data.columnar.vector.DoubleColumnVector;
import org.apache.flink.table.data.columnar.vector.FloatColumnVector;
import org.apache.flink.table.data.columnar.vector.IntColumnVector;
import org.apache.flink.table.data.columnar.vector.LongColumnVector;
import org.apache.flink.table.data.columnar.vector.MapColumnVector;
import org.apache.flink.table.data.columnar.vector.RowColumnVector;
import org.apache.flink.table.data.columnar.vector.ShortColumnVector;
import org.apache.flink.table.data.columnar.vector.TimestampColumnVector;
import org.apache.flink.table.data.columnar.vector.VectorizedColumnBatch;

/**
 * Flink's columnar vectors over Arrow vectors (fluxgate's wire types, PROTOCOL.md §2), so that a
 * batch becomes {@link ColumnarRowData} rows that read the Arrow buffers in place: fixed-width
 * values without boxing, nested values as columnar arrays, maps and rows. Strings and bytes are
 * copied to the heap one value at a time when read, as Flink's {@code Bytes} needs a byte[].
 */
public final class ArrowColumns {
  private ArrowColumns() {}

  /** A batch over the vectors, which must outlive the rows read from it. */
  public static VectorizedColumnBatch batch(List<FieldVector> vectors, int rows) {
    ColumnVector[] columns = new ColumnVector[vectors.size()];
    for (int i = 0; i < columns.length; i++) {
      columns[i] = of(vectors.get(i));
    }
    VectorizedColumnBatch batch = new VectorizedColumnBatch(columns);
    batch.setNumRows(rows);
    return batch;
  }

  static ColumnVector of(FieldVector v) {
    switch (v.getMinorType()) {
      case BIT:
        return (Bools) () -> (BitVector) v;
      case TINYINT:
        return (Bytes8) () -> (TinyIntVector) v;
      case SMALLINT:
        return (Shorts) () -> (SmallIntVector) v;
      case INT:
        return new Ints(v, i -> ((IntVector) v).get(i));
      case DATEDAY:
        return new Ints(v, i -> ((DateDayVector) v).get(i));
      case TIMEMILLI:
        return new Ints(v, i -> ((TimeMilliVector) v).get(i));
      case TIMEMICRO:
        return new Ints(v, i -> (int) (((TimeMicroVector) v).get(i) / 1_000));
      case TIMENANO:
        return new Ints(v, i -> (int) (((TimeNanoVector) v).get(i) / 1_000_000));
      case BIGINT:
        return (Longs) () -> (BigIntVector) v;
      case FLOAT4:
        return (Floats) () -> (Float4Vector) v;
      case FLOAT8:
        return (Doubles) () -> (Float8Vector) v;
      case DECIMAL:
        return new Decimals((DecimalVector) v);
      case VARCHAR:
      case VARBINARY:
        return (Binaries) () -> (BaseVariableWidthVector) v;
      case TIMESTAMPMILLI:
      case TIMESTAMPMILLITZ:
      case TIMESTAMPMICRO:
      case TIMESTAMPMICROTZ:
      case TIMESTAMPNANO:
      case TIMESTAMPNANOTZ:
        return new Timestamps((TimeStampVector) v);
      case LIST:
        return new Lists((ListVector) v);
      case MAP:
        return new Maps((MapVector) v);
      case STRUCT:
        return new Structs((StructVector) v);
      default:
        throw new IllegalArgumentException(
            "column "
                + v.getName()
                + ": Arrow type "
                + v.getField().getType()
                + " is not fluxgate's");
    }
  }

  /** The vector a column reads; its nulls are the column's. */
  private interface Over extends ColumnVector {
    FieldVector vector();

    @Override
    default boolean isNullAt(int i) {
      return vector().isNull(i);
    }
  }

  private interface Bools extends Over, BooleanColumnVector {
    @Override
    BitVector vector();

    @Override
    default boolean getBoolean(int i) {
      return vector().get(i) == 1;
    }
  }

  private interface Bytes8 extends Over, ByteColumnVector {
    @Override
    TinyIntVector vector();

    @Override
    default byte getByte(int i) {
      return vector().get(i);
    }
  }

  private interface Shorts extends Over, ShortColumnVector {
    @Override
    SmallIntVector vector();

    @Override
    default short getShort(int i) {
      return vector().get(i);
    }
  }

  /** INT, DATE (days) and TIME (milliseconds of the day): Flink's int-backed types. */
  @FunctionalInterface
  private interface IntAt {
    int get(int i);
  }

  private static final class Ints implements IntColumnVector {
    private final FieldVector vector;
    private final IntAt at;

    Ints(FieldVector vector, IntAt at) {
      this.vector = vector;
      this.at = at;
    }

    @Override
    public int getInt(int i) {
      return at.get(i);
    }

    @Override
    public boolean isNullAt(int i) {
      return vector.isNull(i);
    }
  }

  private interface Longs extends Over, LongColumnVector {
    @Override
    BigIntVector vector();

    @Override
    default long getLong(int i) {
      return vector().get(i);
    }
  }

  private interface Floats extends Over, FloatColumnVector {
    @Override
    Float4Vector vector();

    @Override
    default float getFloat(int i) {
      return vector().get(i);
    }
  }

  private interface Doubles extends Over, DoubleColumnVector {
    @Override
    Float8Vector vector();

    @Override
    default double getDouble(int i) {
      return vector().get(i);
    }
  }

  /** STRING and BYTES: the value's bytes copied out of the Arrow buffer. */
  private interface Binaries extends Over, BytesColumnVector {
    @Override
    BaseVariableWidthVector vector();

    @Override
    default Bytes getBytes(int i) {
      byte[] b = vector().get(i);
      return new Bytes(b, 0, b.length);
    }
  }

  /** Flink's DecimalData holds precisions up to 18 as an unscaled long. */
  private static final int MAX_COMPACT_PRECISION = 18;

  private record Decimals(DecimalVector vector) implements Over, DecimalColumnVector {
    @Override
    public DecimalData getDecimal(int i, int precision, int scale) {
      if (precision <= MAX_COMPACT_PRECISION) {
        // The low 8 bytes of the little-endian 128-bit value hold every compact unscaled value.
        long unscaled = vector.getDataBuffer().getLong((long) i * DecimalVector.TYPE_WIDTH);
        return DecimalData.fromUnscaledLong(unscaled, precision, scale);
      }
      return DecimalData.fromBigDecimal(vector.getObject(i), precision, scale);
    }
  }

  private record Timestamps(TimeStampVector vector, long perMilli)
      implements Over, TimestampColumnVector {
    Timestamps(TimeStampVector vector) {
      this(vector, perMilli(((ArrowType.Timestamp) vector.getField().getType()).getUnit()));
    }

    private static long perMilli(TimeUnit unit) {
      return switch (unit) {
        case SECOND ->
            throw new IllegalArgumentException("timestamps in seconds are not fluxgate's");
        case MILLISECOND -> 1;
        case MICROSECOND -> 1_000;
        case NANOSECOND -> 1_000_000;
      };
    }

    @Override
    public TimestampData getTimestamp(int i, int precision) {
      long value = vector.get(i);
      if (perMilli == 1) {
        return TimestampData.fromEpochMillis(value);
      }
      return TimestampData.fromEpochMillis(
          Math.floorDiv(value, perMilli),
          (int) (Math.floorMod(value, perMilli) * (1_000_000 / perMilli)));
    }
  }

  private static final class Lists implements ArrayColumnVector {
    private final ListVector vector;
    private final ColumnVector elements;

    Lists(ListVector vector) {
      this.vector = vector;
      this.elements = of(vector.getDataVector());
    }

    @Override
    public boolean isNullAt(int i) {
      return vector.isNull(i);
    }

    @Override
    public ArrayData getArray(int i) {
      int start = vector.getElementStartIndex(i);
      return new ColumnarArrayData(elements, start, vector.getElementEndIndex(i) - start);
    }
  }

  private static final class Maps implements MapColumnVector {
    private final MapVector vector;
    private final ColumnVector keys;
    private final ColumnVector values;

    Maps(MapVector vector) {
      this.vector = vector;
      StructVector entries = (StructVector) vector.getDataVector();
      this.keys = of((FieldVector) entries.getChildByOrdinal(0));
      this.values = of((FieldVector) entries.getChildByOrdinal(1));
    }

    @Override
    public boolean isNullAt(int i) {
      return vector.isNull(i);
    }

    @Override
    public MapData getMap(int i) {
      int start = vector.getElementStartIndex(i);
      return new ColumnarMapData(keys, values, start, vector.getElementEndIndex(i) - start);
    }
  }

  private static final class Structs implements RowColumnVector {
    private final StructVector vector;
    private final VectorizedColumnBatch fields;

    Structs(StructVector vector) {
      this.vector = vector;
      this.fields = batch(vector.getChildrenFromFields(), vector.getValueCount());
    }

    @Override
    public boolean isNullAt(int i) {
      return vector.isNull(i);
    }

    @Override
    public ColumnarRowData getRow(int i) {
      return new ColumnarRowData(fields, i);
    }
  }
}
