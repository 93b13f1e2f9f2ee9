package io.fluxgate.flink.sink;

import io.fluxgate.flink.FluxgateOptions;
import io.fluxgate.flink.FluxgateOptions.DistributionMode;
import java.io.Serializable;
import org.apache.flink.configuration.ReadableConfig;

/** The sink's options beyond what to write: how rows are spread and how failures are undone. */
public record SinkOptions(
    DistributionMode distribution,
    String producerId,
    boolean undoRecovery,
    boolean createPartitions)
    implements Serializable {

  public static SinkOptions from(ReadableConfig options) {
    return new SinkOptions(
        options.get(FluxgateOptions.SINK_DISTRIBUTION_MODE),
        options.getOptional(FluxgateOptions.SINK_PRODUCER_ID).orElse(null),
        options.get(FluxgateOptions.SINK_UNDO_RECOVERY),
        options.get(FluxgateOptions.SINK_CREATE_PARTITIONS));
  }
}
