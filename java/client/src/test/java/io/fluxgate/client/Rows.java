package io.fluxgate.client;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
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
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.complex.ListVector;
import org.apache.arrow.vector.complex.MapVector;
import org.apache.arrow.vector.complex.StructVector;
import org.apache.arrow.vector.complex.impl.UnionListWriter;
import org.apache.arrow.vector.complex.impl.UnionMapWriter;
import org.apache.arrow.vector.complex.writer.BaseWriter;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.Text;

/** Builds batches from plain Java values and reads scans back into rows, for the tests. */
public final class Rows {
  private Rows() {}

  /** The Arrow schema the server gives the table (or these columns of it). */
  public static Schema schema(FluxgateClient client, String table, String... columns) {
    ScanRequest req = ScanRequest.of(table);
    if (columns.length > 0) {
      req = req.withColumns(columns);
    }
    return client.plan(req).schema();
  }

  /** A batch of rows, each a list of values in the schema's column order; the caller closes it. */
  public static VectorSchemaRoot batch(
      BufferAllocator allocator, Schema schema, List<List<Object>> rows) {
    VectorSchemaRoot root = VectorSchemaRoot.create(schema, allocator);
    root.allocateNew();
    for (int c = 0; c < schema.getFields().size(); c++) {
      FieldVector v = root.getVector(c);
      for (int r = 0; r < rows.size(); r++) {
        set(v, r, rows.get(r).get(c));
      }
      v.setValueCount(rows.size());
    }
    root.setRowCount(rows.size());
    return root;
  }

  public static List<Object> row(Object... values) {
    return Arrays.asList(values);
  }

  /** Reads a bounded scan into rows of plain values (String for text, Long for BIGINT ...). */
  public static List<List<Object>> read(FluxgateClient client, ScanRequest request) {
    List<List<Object>> out = new ArrayList<>();
    try (Scanner s = client.scan(request)) {
      while (s.next()) {
        out.addAll(rows(s.root()));
      }
    }
    return out;
  }

  public static List<List<Object>> rows(VectorSchemaRoot root) {
    List<List<Object>> out = new ArrayList<>();
    for (int r = 0; r < root.getRowCount(); r++) {
      List<Object> row = new ArrayList<>();
      for (FieldVector v : root.getFieldVectors()) {
        Object o = v.getObject(r);
        row.add(
            o instanceof Text t ? t.toString() : o instanceof byte[] b ? Arrays.toString(b) : o);
      }
      out.add(row);
    }
    return out;
  }

  @SuppressWarnings("unchecked")
  private static void set(FieldVector v, int r, Object value) {
    if (value == null) {
      if (v instanceof BaseFixedWidthVector f) {
        f.setNull(r);
      } else if (v instanceof VarCharVector s) {
        s.setNull(r);
      } else if (v instanceof VarBinaryVector b) {
        b.setNull(r);
      } else if (v instanceof ListVector l) {
        l.setNull(r);
      } else if (v instanceof StructVector s) {
        s.setNull(r);
      } else {
        throw new IllegalArgumentException("null in " + v.getClass().getSimpleName());
      }
      return;
    }
    if (v instanceof BitVector b) {
      b.setSafe(r, (Boolean) value ? 1 : 0);
    } else if (v instanceof TinyIntVector t) {
      t.setSafe(r, ((Number) value).byteValue());
    } else if (v instanceof SmallIntVector t) {
      t.setSafe(r, ((Number) value).shortValue());
    } else if (v instanceof IntVector t) {
      t.setSafe(r, ((Number) value).intValue());
    } else if (v instanceof BigIntVector t) {
      t.setSafe(r, ((Number) value).longValue());
    } else if (v instanceof Float4Vector t) {
      t.setSafe(r, ((Number) value).floatValue());
    } else if (v instanceof Float8Vector t) {
      t.setSafe(r, ((Number) value).doubleValue());
    } else if (v instanceof DecimalVector t) {
      t.setSafe(r, (BigDecimal) value);
    } else if (v instanceof VarCharVector t) {
      t.setSafe(r, ((String) value).getBytes(StandardCharsets.UTF_8));
    } else if (v instanceof VarBinaryVector t) {
      t.setSafe(r, (byte[]) value);
    } else if (v instanceof DateDayVector t) {
      t.setSafe(r, ((Number) value).intValue());
    } else if (v instanceof TimeMilliVector t) {
      t.setSafe(r, ((Number) value).intValue());
    } else if (v instanceof TimeMicroVector t) {
      t.setSafe(r, ((Number) value).longValue());
    } else if (v instanceof TimeNanoVector t) {
      t.setSafe(r, ((Number) value).longValue());
    } else if (v instanceof TimeStampVector t) {
      t.setSafe(r, ((Number) value).longValue());
    } else if (v instanceof MapVector m) {
      writeMap(m, r, (Map<String, Integer>) value);
    } else if (v instanceof ListVector l) {
      writeList(l, r, (List<Integer>) value);
    } else if (v instanceof StructVector s) {
      writeStruct(s, r, (Map<String, Object>) value);
    } else {
      throw new IllegalArgumentException("no setter for " + v.getClass().getSimpleName());
    }
  }

  private static void writeList(ListVector v, int r, List<Integer> values) {
    UnionListWriter w = v.getWriter();
    w.setPosition(r);
    w.startList();
    for (Integer i : values) {
      w.integer().writeInt(i);
    }
    w.endList();
  }

  private static void writeMap(MapVector v, int r, Map<String, Integer> values) {
    UnionMapWriter w = v.getWriter();
    w.setPosition(r);
    w.startMap();
    for (Map.Entry<String, Integer> e : values.entrySet()) {
      w.startEntry();
      w.key().varChar().writeVarChar(e.getKey());
      w.value().integer().writeInt(e.getValue());
      w.endEntry();
    }
    w.endMap();
  }

  /** A ROW<a INT, b STRING>. */
  private static void writeStruct(StructVector v, int r, Map<String, Object> values) {
    BaseWriter.StructWriter w = v.getWriter();
    w.setPosition(r);
    w.start();
    w.integer("a").writeInt((Integer) values.get("a"));
    w.varChar("b").writeVarChar((String) values.get("b"));
    w.end();
  }
}
