package io.fluxgate.flink.source;

import io.fluxgate.flink.ArrowColumns;
import io.fluxgate.flink.ArrowRows;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VarCharVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.util.TransferPair;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.columnar.ColumnarRowData;
import org.apache.flink.table.data.columnar.vector.VectorizedColumnBatch;
import org.apache.flink.types.RowKind;

/**
 * One batch of a scan as Flink rows: the produced columns taken over from the stream's root (a
 * transfer of buffers, no copy, so the stream reads on) and read in place as {@link
 * ColumnarRowData}. The rows are valid until the batch is closed, after the next batch of the
 * reader is emitted, as with Flink's own columnar file sources. Until then the batch is in a set of
 * live batches, which a closing reader frees, wherever they are (queued, or held by a fetcher).
 */
public final class ColumnarBatch implements AutoCloseable {
  private final List<FieldVector> owned;
  private final VectorizedColumnBatch batch;
  private final RowKind[] kinds;
  private final Set<ColumnarBatch> live;

  /**
   * Takes the produced columns of root, fields columns from first on; with changelog, each row's
   * RowKind comes from the _change_type in column 0. The batch is in live until it is closed.
   */
  ColumnarBatch(
      VectorSchemaRoot root,
      int first,
      int fields,
      boolean changelog,
      BufferAllocator allocator,
      Set<ColumnarBatch> live) {
    int rows = root.getRowCount();
    owned = new ArrayList<>(fields);
    this.live = live;
    live.add(this); // before the transfers: a failure below leaves them to the reader's close
    for (int i = first; i < first + fields; i++) {
      TransferPair pair = root.getVector(i).getTransferPair(allocator);
      pair.transfer();
      owned.add((FieldVector) pair.getTo());
    }
    batch = ArrowColumns.batch(owned, rows);
    kinds = changelog ? kinds((VarCharVector) root.getVector(0), rows) : null;
  }

  int rows() {
    return batch.getNumRows();
  }

  RowData row(int i) {
    ColumnarRowData row = new ColumnarRowData(batch, i);
    if (kinds != null) {
      row.setRowKind(kinds[i]);
    }
    return row;
  }

  /** The RowKind of each _change_type, told apart by length and first byte, not decoded. */
  private static RowKind[] kinds(VarCharVector changeType, int rows) {
    RowKind[] kinds = new RowKind[rows];
    ArrowBuf data = changeType.getDataBuffer();
    for (int r = 0; r < rows; r++) {
      long start = changeType.getStartOffset(r);
      int length = changeType.getValueLength(r);
      byte first = data.getByte(start);
      if (first == 'i' && length == 6) {
        kinds[r] = RowKind.INSERT;
      } else if (first == 'd' && length == 6) {
        kinds[r] = RowKind.DELETE;
      } else if (length == 13) {
        kinds[r] = RowKind.UPDATE_BEFORE;
      } else if (length == 12) {
        kinds[r] = RowKind.UPDATE_AFTER;
      } else {
        throw new IllegalStateException("unknown _change_type " + ArrowRows.utf8(changeType, r));
      }
    }
    return kinds;
  }

  /** Frees the columns; only the first call does anything, from whichever thread. */
  @Override
  public void close() {
    if (live.remove(this)) {
      owned.forEach(FieldVector::close);
    }
  }
}
