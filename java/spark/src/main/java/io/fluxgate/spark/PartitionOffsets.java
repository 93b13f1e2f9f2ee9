package io.fluxgate.spark;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.connector.read.streaming.Offset;

/**
 * A partitioned table's stream place: per partition and bucket, the offset to read from next. Its
 * JSON, {"20261201": {"0": 12, "1": 40}}, is what Spark writes to the query's checkpoint. A
 * partition it does not name is read from its earliest offset.
 */
final class PartitionOffsets extends Offset {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final TreeMap<String, Map<Integer, Long>> offsets = new TreeMap<>();

  PartitionOffsets(Map<String, Map<Integer, Long>> offsets) {
    offsets.forEach((partition, buckets) -> this.offsets.put(partition, new TreeMap<>(buckets)));
  }

  static PartitionOffsets parse(String json) {
    try {
      return new PartitionOffsets(JSON.readValue(json, new TypeReference<>() {}));
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          "fluxgate stream partition offsets " + json + ": " + e.getMessage(), e);
    }
  }

  Map<String, Map<Integer, Long>> offsets() {
    return offsets;
  }

  @Override
  public String json() {
    try {
      return JSON.writeValueAsString(offsets);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
