package io.fluxgate.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

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
   */
  private static final class ReaderOwned extends ArrowColumnVector {
    ReaderOwned(FieldVector vector) {
      super(vector);
    }

    @Override
    public void closeIfFreeable() {}
  }

  @Override
  public void close() {
    if (converted != null) {
      converted.close();
    }
  }
}
