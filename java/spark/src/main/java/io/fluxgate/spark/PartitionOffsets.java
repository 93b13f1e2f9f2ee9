package io.fluxgate.spark;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.PartitionInfo;
import io.fluxgate.client.Position;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.apache.spark.sql.connector.read.streaming.Offset;

/**
 * A partitioned table's stream place: per partition, its id and per bucket the offset to read from
 * next. Its JSON, {"20261201": {"id": 12, "buckets": {"0": 12, "1": 40}}}, is what Spark writes to
 * the query's checkpoint. The id tells a partition dropped and created again under its name (a new
 * id, a log from offset 0) from the one the offsets are of. A partition it does not name is read
 * from its earliest offset.
 */
final class PartitionOffsets extends Offset {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One partition's place: its id and, per bucket, the offset to read from next. */
  record Place(long id, Map<Integer, Long> buckets) {
    Place {
      buckets = new TreeMap<>(buckets);
    }
  }

  private final TreeMap<String, Place> places;

  PartitionOffsets(Map<String, Place> places) {
    this.places = new TreeMap<>(places);
  }

  /**
   * The offsets at a position of the partitions that existed throughout the listing: list-offsets
   * answers by name, so a partition is kept only if the listings before and after it show the same
   * id. One created, dropped or created again meanwhile is left to the next listing.
   */
  static PartitionOffsets list(FluxgateClient client, String table, Position at) {
    Map<String, Long> before = ids(client.listPartitions(table));
    Map<String, Map<Integer, Long>> offsets = client.listPartitionOffsets(table, at, null);
    Map<String, Long> after = ids(client.listPartitions(table));
    Map<String, Place> places = new HashMap<>();
    offsets.forEach(
        (name, buckets) -> {
          Long id = before.get(name);
          if (id != null && id.equals(after.get(name))) {
            places.put(name, new Place(id, buckets));
          }
        });
    return new PartitionOffsets(places);
  }

  /** Each partition's id by name. */
  static Map<String, Long> ids(List<PartitionInfo> partitions) {
    Map<String, Long> ids = new HashMap<>();
    partitions.forEach(p -> ids.put(p.partitionName(), p.partitionId()));
    return ids;
  }

  static PartitionOffsets parse(String json) {
    try {
      return new PartitionOffsets(JSON.readValue(json, new TypeReference<Map<String, Place>>() {}));
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          "fluxgate stream partition offsets " + json + ": " + e.getMessage(), e);
    }
  }

  Map<String, Place> places() {
    return places;
  }

  @Override
  public String json() {
    try {
      return JSON.writeValueAsString(places);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e);
    }
  }
}
