package io.fluxgate.flink.source;

import io.fluxgate.client.ConnectionSettings;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.Boundedness;
import org.apache.flink.api.connector.source.Source;
import org.apache.flink.api.connector.source.SourceReader;
import org.apache.flink.api.connector.source.SourceReaderContext;
import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;
import org.apache.flink.api.java.typeutils.ResultTypeQueryable;
import org.apache.flink.core.io.SimpleVersionedSerializer;
import org.apache.flink.table.data.RowData;

/**
 * A FLIP-27 source over a fluxgate scan: one split per bucket (per partition and bucket of a
 * partitioned table), offsets in checkpoints.
 */
public final class FluxgateSource
    implements Source<RowData, BucketSplit, EnumeratorState>, ResultTypeQueryable<RowData> {
  private final ConnectionSettings connection;
  private final ScanSpec spec;
  private final TypeInformation<RowData> producedType;

  FluxgateSource(
      ConnectionSettings connection, ScanSpec spec, TypeInformation<RowData> producedType) {
    this.connection = connection;
    this.spec = spec;
    this.producedType = producedType;
  }

  @Override
  public Boundedness getBoundedness() {
    return spec.bounded() ? Boundedness.BOUNDED : Boundedness.CONTINUOUS_UNBOUNDED;
  }

  @Override
  public SplitEnumerator<BucketSplit, EnumeratorState> createEnumerator(
      SplitEnumeratorContext<BucketSplit> context) {
    return new BucketEnumerator(context, connection, spec, null);
  }

  @Override
  public SplitEnumerator<BucketSplit, EnumeratorState> restoreEnumerator(
      SplitEnumeratorContext<BucketSplit> context, EnumeratorState checkpoint) {
    return new BucketEnumerator(context, connection, spec, checkpoint);
  }

  @Override
  public SimpleVersionedSerializer<BucketSplit> getSplitSerializer() {
    return BucketSplitSerializer.SPLIT;
  }

  @Override
  public SimpleVersionedSerializer<EnumeratorState> getEnumeratorCheckpointSerializer() {
    return BucketSplitSerializer.ENUMERATOR;
  }

  @Override
  public SourceReader<RowData, BucketSplit> createReader(SourceReaderContext context) {
    return FluxgateSourceReader.create(connection, spec, context);
  }

  @Override
  public TypeInformation<RowData> getProducedType() {
    return producedType;
  }
}
