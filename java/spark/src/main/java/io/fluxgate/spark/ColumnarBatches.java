package io.fluxgate.spark;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.spark.sql.vectorized.ArrowColumnVector;
import org.apache.spark.sql.vectorized.ColumnVector;
import org.apache.spark.sql.vectorized.ColumnarBatch;

/**
 * Hands record batches to Spark as they were read: each Arrow vector becomes an {@link
 * ArrowColumnVector} without a copy, except timestamps of another unit than microseconds, which are
 * copied into microseconds. Owns those copies until the next batch or {@link #close}.
 */
final class ColumnarBatches implements AutoCloseable {
  private final BufferAllocator allocator;
  private final List<FieldVector> copies = new ArrayList<>();

  ColumnarBatches(BufferAllocator allocator) {
    this.allocator = allocator;
  }

  /** The first width columns of root as a Spark batch, valid until the next call or close. */
  ColumnarBatch wrap(VectorSchemaRoot root, int width) {
    releaseCopies();
    List<FieldVector> vectors = root.getFieldVectors();
    ColumnVector[] columns = new ColumnVector[width];
    for (int i = 0; i < columns.length; i++) {
      FieldVector v = vectors.get(i);
      if (!ArrowTypes.sparkReadsAsIs(v.getField())) {
        v = TimestampUnits.convert(v, ArrowTypes.sparkForm(v.getField()), allocator);
        copies.add(v);
      }
      columns[i] = new ReaderOwned(v);
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

  private void releaseCopies() {
    copies.forEach(FieldVector::close);
    copies.clear();
  }

  @Override
  public void close() {
    releaseCopies();
  }
}
