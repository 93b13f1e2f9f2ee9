package io.fluxgate.spark;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.connector.read.streaming.Offset;

/**
 * A stream's place: per bucket, the offset to read from next. Its JSON, {"0": 12, "1": 40}, is what
 * Spark writes to the query's checkpoint.
 */
final class BucketOffsets extends Offset {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final TreeMap<Integer, Long> offsets;

  BucketOffsets(Map<Integer, Long> offsets) {
    this.offsets = new TreeMap<>(offsets);
  }

  static BucketOffsets parse(String json) {
    try {
      return new BucketOffsets(JSON.readValue(json, new TypeReference<Map<Integer, Long>>() {}));
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          "fluxgate stream offsets " + json + ": " + e.getMessage(), e);
    }
  }

  Map<Integer, Long> offsets() {
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
