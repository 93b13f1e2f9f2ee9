package io.fluxgate.flink.lookup;

import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.FluxgateException;
import io.fluxgate.client.LookupResult;
import io.fluxgate.client.Lookuper;
import io.fluxgate.client.ScanRequest;
import io.fluxgate.flink.ArrowColumns;
import io.fluxgate.flink.ArrowRows;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.IntVector;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.columnar.ColumnarRowData;
import org.apache.flink.table.data.columnar.vector.VectorizedColumnBatch;
import org.apache.flink.table.runtime.typeutils.RowDataSerializer;
import org.apache.flink.table.types.logical.LogicalType;

/**
 * One DoExchange lookup stream of a {@link LookupSpec}: turns Flink key rows into a key batch and
 * the answer back into rows, reopening the stream to retry a failure that may pass. One thread uses
 * a session.
 */
public final class LookupSession implements AutoCloseable {
  static final long RETRY_BACKOFF_MS = 1_000;

  private final FluxgateClient client;
  private final LookupSpec spec;
  private final VectorSchemaRoot keys;
  private final ArrowRows.Setter[] setters;
  private final RowData.FieldGetter[] keyGetters;
  private final RowData.FieldGetter[] extraKeyGetters;
  private final RowData.FieldGetter[] extraColumnGetters;
  private final RowDataSerializer copier;
  private Lookuper lookuper;

  LookupSession(FluxgateClient client, BufferAllocator allocator, LookupSpec spec) {
    this.client = client;
    this.spec = spec;
    // The table's own Arrow types for the key columns: what the server compares against.
    this.keys =
        VectorSchemaRoot.create(
            client
                .plan(
                    ScanRequest.of(spec.table())
                        .withColumns(spec.keyColumns().toArray(String[]::new)))
                .schema(),
            allocator);
    int n = spec.keyColumns().size();
    this.setters = new ArrowRows.Setter[n];
    this.keyGetters = new RowData.FieldGetter[n];
    for (int i = 0; i < n; i++) {
      LogicalType type =
          spec.produced().getTypeAt(spec.produced().getFieldIndex(spec.keyColumns().get(i)));
      setters[i] = ArrowRows.setter(keys.getVector(i), type);
      keyGetters[i] = RowData.createFieldGetter(type, spec.keyPositions()[i]);
    }
    this.extraKeyGetters = new RowData.FieldGetter[spec.extraKeys().length];
    this.extraColumnGetters = new RowData.FieldGetter[spec.extraKeys().length];
    for (int i = 0; i < extraKeyGetters.length; i++) {
      LogicalType type = spec.produced().getTypeAt(spec.extraColumns()[i]);
      extraKeyGetters[i] = RowData.createFieldGetter(type, spec.extraKeys()[i]);
      extraColumnGetters[i] = RowData.createFieldGetter(type, spec.extraColumns()[i]);
    }
    this.copier = new RowDataSerializer(spec.produced());
    this.lookuper = client.lookup(spec.request());
  }

  /** The rows of each key, in the order of the keys; a key with a NULL in its index has none. */
  List<List<RowData>> lookup(List<RowData> keyRows) {
    List<List<RowData>> rows = new ArrayList<>(keyRows.size());
    int[] sent = new int[keyRows.size()]; // key batch row -> keyRows index
    int n = 0;
    keys.clear();
    keys.allocateNew();
    for (int k = 0; k < keyRows.size(); k++) {
      rows.add(new ArrayList<>(1));
      if (fill(n, keyRows.get(k))) {
        sent[n++] = k;
      }
    }
    if (n == 0) {
      return rows; // an equi-join never matches NULL
    }
    keys.setRowCount(n);
    try (LookupResult answer = lookupWithRetries()) {
      VectorSchemaRoot result = answer.rows();
      IntVector keyIndex = (IntVector) result.getVector(0);
      List<FieldVector> vectors = result.getFieldVectors();
      VectorizedColumnBatch columns =
          ArrowColumns.batch(vectors.subList(1, vectors.size()), result.getRowCount());
      for (int r = 0; r < result.getRowCount(); r++) {
        // A copy: the answer's buffers are released when this batch is done.
        RowData row = copier.copy(new ColumnarRowData(columns, r));
        int k = sent[keyIndex.get(r)];
        if (matchesExtraKeys(keyRows.get(k), row)) {
          rows.get(k).add(row);
        }
      }
    }
    return rows;
  }

  /** Writes a key's index columns at row n of the key batch; false if one is NULL. */
  private boolean fill(int n, RowData key) {
    for (int i = 0; i < setters.length; i++) {
      Object v = keyGetters[i].getFieldOrNull(key);
      if (v == null) {
        return false;
      }
    }
    for (int i = 0; i < setters.length; i++) {
      setters[i].set(n, keyGetters[i].getFieldOrNull(key));
    }
    return true;
  }

  private boolean matchesExtraKeys(RowData key, RowData row) {
    for (int i = 0; i < extraKeyGetters.length; i++) {
      if (!Objects.equals(
          extraKeyGetters[i].getFieldOrNull(key), extraColumnGetters[i].getFieldOrNull(row))) {
        return false;
      }
    }
    return true;
  }

  private LookupResult lookupWithRetries() {
    for (int attempt = 1; ; attempt++) {
      try {
        return lookuper.lookup(keys);
      } catch (FluxgateException e) {
        if (attempt > spec.maxRetries() || !mayPass(e)) {
          throw e;
        }
        lookuper.close(); // a failed stream answers nothing more
        backOff(attempt, e);
        lookuper = client.lookup(spec.request());
      }
    }
  }

  /** Waits before a retry: gRPC's reconnection to a server that went away backs off from 1 s. */
  private static void backOff(int attempt, FluxgateException cause) {
    try {
      Thread.sleep(RETRY_BACKOFF_MS * attempt);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw cause;
    }
  }

  /** Whether asking again may succeed: not for what is wrong with the request itself. */
  private static boolean mayPass(FluxgateException e) {
    return !(e instanceof FluxgateException.InvalidArgument
        || e instanceof FluxgateException.NotFound
        || e instanceof FluxgateException.FailedPrecondition
        || e instanceof FluxgateException.PermissionDenied
        || e instanceof FluxgateException.Unauthenticated);
  }

  @Override
  public void close() {
    lookuper.close();
    keys.close();
  }
}
