package io.fluxgate.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Bodies where an empty map or list means something other than one left out. */
class WireTest {
  @Test
  void emptyPartitionOffsetsAreSent() throws Exception {
    // A sink registers the partitions it starts from: none yet is not "not partitioned".
    assertEquals(
        "{\"producer_id\":\"p\",\"table\":\"t\",\"partition_offsets\":{}}",
        Json.MAPPER.writeValueAsString(new Wire.ProducerOffsetsRequest("p", "t", null, Map.of())));
    assertEquals(
        "{\"table\":\"t\",\"offsets\":{}}",
        Json.MAPPER.writeValueAsString(new Wire.UndoRequest("t", Map.of(), null)));
  }

  @Test
  void anEmptyListOfPartitionsNamesNone() throws Exception {
    assertEquals(
        "{\"table\":\"t\",\"partitions\":[]}",
        Json.MAPPER.writeValueAsString(new Wire.TableStatsRequest("t", List.of())));
    assertEquals(
        "{\"table\":\"t\",\"partitions\":[]}",
        Json.MAPPER.writeValueAsString(new Wire.OffsetsRequest("t", null, null, List.of())));
  }
}
