package io.fluxgate.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.BaseFixedWidthVector;
import org.apache.arrow.vector.BitVector;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;
import org.apache.spark.unsafe.Platform;

/**
 * Hands record batches to Spark as they were read: each Arrow vector becomes an {@link
 * ArrowColumnVector} without a copy, except the values of timestamps and times not in Spark's form
 * ({@link SparkForm}), at any depth, which are copied into it. Owns those copies until the next
 * batch or {@link #close}.
 */
final class ColumnarBatches implements AutoCloseable {
  private final BufferAllocator allocator;
  private VectorSchemaRoot converted; // the batch in Spark's form, when the read one is not

  ColumnarBatches(BufferAllocator allocator) {
    this.allocator = allocator;
  }

  /** The first width columns of root as a Spark batch, valid until the next call or close. */
  ColumnarBatch wrap(VectorSchemaRoot root, int width) {
    List<FieldVector> vectors = root.getFieldVectors().subList(0, width);
    if (converted != null || !vectors.stream().allMatch(v -> SparkForm.is(v.getField()))) {
      if (converted == null) {
        List<Field> fields = new ArrayList<>();
        vectors.forEach(v -> fields.add(SparkForm.of(v.getField())));
        converted = VectorSchemaRoot.create(new Schema(fields), allocator);
      }
      SparkForm.load(vectors, root.getRowCount(), converted, allocator);
      vectors = converted.getFieldVectors();
    }
    ColumnVector[] columns = new ColumnVector[width];
    for (int i = 0; i < columns.length; i++) {
      columns[i] = new ReaderOwned(vectors.get(i));
    }
    return new ColumnarBatch(columns, root.getRowCount());
  }

  /**
   * A column whose vector the reader owns: Spark frees each batch's columns once consumed
   * (closeIfFreeable), which would tear the children off a struct vector the next batch loads into.
   * Reads nulls and fixed-width values straight from the buffers, without Arrow's per-value bounds
   * and null checks (Spark checks isNullAt first, as for its own off-heap vectors): they were the
   * largest cost of a scan.
   */
  private static final class ReaderOwned extends ArrowColumnVector {
    private final long validity; // the validity bitmap's address, or 0 when there is no null
    private final long values; // a fixed-width vector's values' address, else 0

    ReaderOwned(FieldVector vector) {
      super(vector);
      this.validity = vector.getNullCount() == 0 ? 0 : vector.getValidityBufferAddress();
      this.values =
          vector instanceof BaseFixedWidthVector f && !(vector instanceof BitVector)
              ? f.getDataBufferAddress()
              : 0;
    }

    @Override
    public void closeIfFreeable() {}

    @Override
    public boolean hasNull() {
      return validity != 0;
    }

    @Override
    public boolean isNullAt(int rowId) {
      return validity != 0
          && (Platform.getByte(null, validity + (rowId >> 3)) & (1 << (rowId & 7))) == 0;
    }

    @Override
    public byte getByte(int rowId) {
      return values != 0 ? Platform.getByte(null, values + rowId) : super.getByte(rowId);
    }

    @Override
    public short getShort(int rowId) {
      return values != 0 ? Platform.getShort(null, values + 2L * rowId) : super.getShort(rowId);
    }

    @Override
    public int getInt(int rowId) {
      return values != 0 ? Platform.getInt(null, values + 4L * rowId) : super.getInt(rowId);
    }

    @Override
    public long getLong(int rowId) {
      return values != 0 ? Platform.getLong(null, values + 8L * rowId) : super.getLong(rowId);
    }

    @Override
    public float getFloat(int rowId) {
      return values != 0 ? Platform.getFloat(null, values + 4L * rowId) : super.getFloat(rowId);
    }

    @Override
    public double getDouble(int rowId) {
      return values != 0 ? Platform.getDouble(null, values + 8L * rowId) : super.getDouble(rowId);
    }
  }

  @Override
  public void close() {
    if (converted != null) {
      converted.close();
    }
  }
}
