package io.fluxgate.flink;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.List;
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
import org.apache.arrow.vector.VarBinaryVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.types.TimeUnit;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.flink.table.data.ArrayData;
import org.apache.flink.table.data.DecimalData;
import org.apache.flink.table.data.MapData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.data.TimestampData;
import org.apache.flink.table.types.logical.ArrayType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.MapType;
import org.apache.flink.table.types.logical.RowType;

/**
 * Writes Flink's internal data structures into Arrow vectors (fluxgate's wire types, PROTOCOL.md
 * §2), one value at a time: the sink's side. Reads go through {@link ArrowColumns}.
 */
public final class ArrowRows {
  private ArrowRows() {}

  /** Writes a Flink internal value (never null) at a row of a vector. */
  public interface Setter {
    void set(int row, Object value);
  }

  /** A setter for vector v from values of Flink type t; nulls are the caller's (see write). */
  public static Setter setter(FieldVector v, LogicalType t) {
    switch (v.getMinorType()) {
      case BIT:
        return (row, x) -> ((BitVector) v).setSafe(row, (Boolean) x ? 1 : 0);
      case TINYINT:
        return (row, x) -> ((TinyIntVector) v).setSafe(row, (Byte) x);
      case SMALLINT:
        return (row, x) -> ((SmallIntVector) v).setSafe(row, (Short) x);
      case INT:
        return (row, x) -> ((IntVector) v).setSafe(row, (Integer) x);
      case BIGINT:
        return (row, x) -> ((BigIntVector) v).setSafe(row, (Long) x);
      case FLOAT4:
        return (row, x) -> ((Float4Vector) v).setSafe(row, (Float) x);
      case FLOAT8:
        return (row, x) -> ((Float8Vector) v).setSafe(row, (Double) x);
      case DECIMAL:
        DecimalVector d = (DecimalVector) v;
        return (row, x) -> {
          BigDecimal b = ((DecimalData) x).toBigDecimal().setScale(d.getScale());
          d.setSafe(row, b);
        };
      case VARCHAR:
        return (row, x) -> ((VarCharVector) v).setSafe(row, ((StringData) x).toBytes());
      case VARBINARY:
        return (row, x) -> ((VarBinaryVector) v).setSafe(row, (byte[]) x);
      case DATEDAY:
        return (row, x) -> ((DateDayVector) v).setSafe(row, (Integer) x);
      case TIMEMILLI:
        return (row, x) -> ((TimeMilliVector) v).setSafe(row, (Integer) x);
      case TIMEMICRO:
        return (row, x) -> ((TimeMicroVector) v).setSafe(row, (Integer) x * 1_000L);
      case TIMENANO:
        return (row, x) -> ((TimeNanoVector) v).setSafe(row, (Integer) x * 1_000_000L);
      case TIMESTAMPMILLI:
      case TIMESTAMPMILLITZ:
      case TIMESTAMPMICRO:
      case TIMESTAMPMICROTZ:
      case TIMESTAMPNANO:
      case TIMESTAMPNANOTZ:
        TimeUnit unit = ((ArrowType.Timestamp) v.getField().getType()).getUnit();
        return (row, x) -> ((TimeStampVector) v).setSafe(row, epoch((TimestampData) x, unit));
      case MAP:
        MapVector m = (MapVector) v;
        StructVector entries = (StructVector) m.getDataVector();
        MapType mt = (MapType) t;
        FieldVector kv = (FieldVector) entries.getChildByOrdinal(0);
        FieldVector vv = (FieldVector) entries.getChildByOrdinal(1);
        Setter ks = setter(kv, mt.getKeyType());
        Setter vs = setter(vv, mt.getValueType());
        ArrayData.ElementGetter kg = ArrayData.createElementGetter(mt.getKeyType());
        ArrayData.ElementGetter vg = ArrayData.createElementGetter(mt.getValueType());
        return (row, x) -> {
          MapData map = (MapData) x;
          int start = m.startNewValue(row);
          for (int i = 0; i < map.size(); i++) {
            entries.setIndexDefined(start + i);
            write(kv, ks, start + i, kg.getElementOrNull(map.keyArray(), i));
            write(vv, vs, start + i, vg.getElementOrNull(map.valueArray(), i));
          }
          m.endValue(row, map.size());
        };
      case LIST:
        ListVector l = (ListVector) v;
        LogicalType et = ((ArrayType) t).getElementType();
        FieldVector child = l.getDataVector();
        Setter es = setter(child, et);
        ArrayData.ElementGetter eg = ArrayData.createElementGetter(et);
        return (row, x) -> {
          ArrayData array = (ArrayData) x;
          int start = l.startNewValue(row);
          for (int i = 0; i < array.size(); i++) {
            write(child, es, start + i, eg.getElementOrNull(array, i));
          }
          l.endValue(row, array.size());
        };
      case STRUCT:
        StructVector s = (StructVector) v;
        RowType rt = (RowType) t;
        List<FieldVector> children = s.getChildrenFromFields();
        Setter[] setters = new Setter[children.size()];
        RowData.FieldGetter[] getters = new RowData.FieldGetter[children.size()];
        for (int i = 0; i < setters.length; i++) {
          setters[i] = setter(children.get(i), rt.getTypeAt(i));
          getters[i] = RowData.createFieldGetter(rt.getTypeAt(i), i);
        }
        return (row, x) -> {
          RowData r = (RowData) x;
          s.setIndexDefined(row);
          for (int i = 0; i < setters.length; i++) {
            write(children.get(i), setters[i], row, getters[i].getFieldOrNull(r));
          }
        };
      default:
        throw new IllegalArgumentException(
            "column "
                + v.getName()
                + ": Arrow type "
                + v.getField().getType()
                + " is not fluxgate's");
    }
  }

  /** Writes value (perhaps null) at row of v. */
  public static void write(FieldVector v, Setter s, int row, Object value) {
    if (value == null) {
      if (v instanceof ListVector l) {
        l.setNull(row);
      } else if (v instanceof StructVector st) {
        st.setNull(row);
      } else if (v instanceof org.apache.arrow.vector.BaseFixedWidthVector f) {
        f.setNull(row);
      } else if (v instanceof org.apache.arrow.vector.BaseVariableWidthVector w) {
        w.setNull(row);
      } else {
        throw new IllegalArgumentException("column " + v.getName() + " cannot be set NULL");
      }
    } else {
      s.set(row, value);
    }
  }

  private static long epoch(TimestampData t, TimeUnit unit) {
    long ms = t.getMillisecond();
    int nanos = t.getNanoOfMillisecond();
    switch (unit) {
      case MILLISECOND:
        return ms;
      case MICROSECOND:
        return ms * 1_000 + nanos / 1_000;
      case NANOSECOND:
        return ms * 1_000_000 + nanos;
      default:
        throw new IllegalArgumentException("timestamp unit " + unit);
    }
  }

  public static String utf8(VarCharVector v, int row) {
    return new String(v.get(row), StandardCharsets.UTF_8);
  }
}
