package io.fluxgate.flink;

import java.util.function.Consumer;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.connector.source.ReaderOutput;
import org.apache.flink.api.connector.source.SourceOutput;
import org.apache.flink.table.data.RowData;

/** A reader's output that hands each row to out, for tests that drive a reader themselves. */
public record CollectingOutput(Consumer<RowData> out) implements ReaderOutput<RowData> {
  @Override
  public void collect(RowData row) {
    out.accept(row);
  }

  @Override
  public void collect(RowData row, long timestamp) {
    out.accept(row);
  }

  @Override
  public void emitWatermark(Watermark watermark) {}

  @Override
  public void markIdle() {}

  @Override
  public void markActive() {}

  @Override
  public SourceOutput<RowData> createOutputForSplit(String splitId) {
    return this;
  }

  @Override
  public void releaseOutputForSplit(String splitId) {}
}
