package io.fluxgate.spark;

import org.apache.spark.sql.connector.metric.CustomSumMetric;
import org.apache.spark.sql.connector.metric.CustomTaskMetric;

/**
 * The scan metric "bytes read": the Arrow buffer bytes of the batches a scan received, summed over
 * its tasks. Spark makes this class by name on the driver, so it is public.
 */
public final class BytesRead extends CustomSumMetric {
  static final String NAME = "bytesRead";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public String description() {
    return "Arrow bytes read";
  }

  /** One task's value. */
  record Value(long value) implements CustomTaskMetric {
    @Override
    public String name() {
      return NAME;
    }
  }
}
