package io.fluxgate.flink.source;

import io.fluxgate.client.ConnectionSettings;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.flink.Release;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.connector.base.source.reader.RecordEmitter;
import org.apache.flink.connector.base.source.reader.SourceReaderBase;
import org.apache.flink.metrics.Counter;
import org.apache.flink.table.data.RowData;

/**
 * Reads the splits it is given on connector-base's fetchers, one per split ({@link
 * FetcherPerSplit}), with one client. A split's state advances when a batch has been emitted, so a
 * checkpoint holds exactly what went downstream, also inside a snapshot (see {@link BucketSplit}).
 */
public final class FluxgateSourceReader
    extends SourceReaderBase<SplitFetch, RowData, BucketSplit, FluxgateSourceReader.SplitState> {

  /** A split being read, as a checkpoint would store it now. */
  static final class SplitState {
    private BucketSplit split;

    SplitState(BucketSplit split) {
      this.split = split;
    }
  }

  private final FluxgateClient client;

  /** The batches fetched and not yet freed, which close frees wherever they are. */
  private final Set<ColumnarBatch> live;

  private FluxgateSourceReader(
      FluxgateClient client, ScanSpec spec, Set<ColumnarBatch> live, SourceReaderContext context) {
    super(
        new FetcherPerSplit(
            () -> new BucketSplitReader(client, spec, live), context.getConfiguration()),
        new BatchEmitter(context.metricGroup().getIOMetricGroup().getNumRecordsInCounter()),
        context.getConfiguration(),
        context);
    this.client = client;
    this.live = live;
  }

  /** A reader of spec, connected (with a username, bad credentials fail here). */
  static FluxgateSourceReader create(
      ConnectionSettings connection, ScanSpec spec, SourceReaderContext context) {
    return new FluxgateSourceReader(
        connection.connect(), spec, ConcurrentHashMap.newKeySet(), context);
  }

  @Override
  protected SplitState initializedState(BucketSplit split) {
    return new SplitState(split);
  }

  @Override
  protected BucketSplit toSplitType(String splitId, SplitState state) {
    return state.split;
  }

  @Override
  protected void onSplitFinished(Map<String, SplitState> finished) {}

  /**
   * Stops the fetchers and frees their batches and the client, throwing nothing ({@link Release}):
   * Flink closes a failed or cancelled task's reader too, perhaps on an interrupted thread, and the
   * fetchers' buffers must be free before the client's allocator closes.
   */
  @Override
  public void close() {
    boolean interrupted = Thread.interrupted();
    Release.all(this, super::close);
    interrupted |= Thread.interrupted();
    Release.all(this, () -> List.copyOf(live).forEach(ColumnarBatch::close), client);
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Emits a batch's rows, then records the split's state after them. */
  private static final class BatchEmitter
      implements RecordEmitter<SplitFetch, RowData, SplitState> {
    private final Counter recordsIn;

    BatchEmitter(Counter recordsIn) {
      this.recordsIn = recordsIn;
    }

    @Override
    public void emitRecord(SplitFetch fetch, SourceOutput<RowData> output, SplitState state) {
      ColumnarBatch rows = fetch.rows();
      if (rows != null) {
        for (int i = 0; i < rows.rows(); i++) {
          output.collect(rows.row(i));
        }
        recordsIn.inc(rows.rows() - 1L); // the base counts the batch as one record
      } else {
        recordsIn.dec(); // a state change alone: no record came in
      }
      state.split = fetch.after();
    }
  }
}
