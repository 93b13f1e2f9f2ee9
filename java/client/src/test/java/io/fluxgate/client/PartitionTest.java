package io.fluxgate.client;

import static io.fluxgate.client.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;

/** Partitioned tables through the client: the partition actions, writes, scans and offsets. */
class PartitionTest extends ServerTest {

  private String dayTable() {
    return dayTable(table("days"));
  }

  private String dayTable(String name) {
    client.createTable(
        TableSpec.of(name, Column.of("id", "BIGINT"), Column.of("dt", "STRING"))
            .withPartitionKeys("dt")
            .withOptions(Map.of("bucket.num", "2")),
        false);
    return name;
  }

  private PutResult write(WriteRequest request, List<List<Object>> rows) {
    Schema schema = Rows.schema(client, request.table());
    try (VectorSchemaRoot batch = Rows.batch(allocator, schema, rows);
        TableWriter w = client.newWriter(request)) {
      return w.write(batch);
    }
  }

  private static List<String> names(List<PartitionInfo> partitions) {
    return partitions.stream().map(PartitionInfo::partitionName).toList();
  }

  @Test
  void partitionsAreCreatedListedInPagesAndDropped() {
    String name = dayTable();
    assertEquals(List.of("dt"), client.describeTable(name).partitionKeys());
    assertTrue(client.describeTable(name).isPartitioned());

    PartitionInfo first = client.createPartition(name, Map.of("dt", "20261201"), false);
    assertEquals("20261201", first.partitionName());
    assertEquals(Map.of("dt", "20261201"), first.spec());
    assertEquals(
        first.partitionId(),
        client.createPartition(name, Map.of("dt", "20261201"), true).partitionId());
    assertThrows(
        FluxgateException.AlreadyExists.class,
        () -> client.createPartition(name, Map.of("dt", "20261201"), false));

    // More partitions than one page of list-partitions holds, so that paging is followed.
    List<String> want = new ArrayList<>();
    for (int d = 0; d < 120; d++) {
      String day = String.format("2027%04d", d);
      client.createPartition(name, Map.of("dt", day), false);
      want.add(day);
    }
    want.add(0, "20261201");
    assertEquals(want, names(client.listPartitions(name)));
    assertEquals(List.of("20270007"), names(client.listPartitions(name, Map.of("dt", "20270007"))));

    client.dropPartition(name, Map.of("dt", "20261201"), false);
    client.dropPartition(name, Map.of("dt", "20261201"), true);
    assertThrows(
        FluxgateException.NotFound.class,
        () -> client.dropPartition(name, Map.of("dt", "20261201"), false));
    PartitionInfo again = client.createPartition(name, Map.of("dt", "20261201"), false);
    assertNotEquals(first.partitionId(), again.partitionId());
  }

  @Test
  void partitionActionsOnAPlainTableFailTheirPrecondition() {
    String name = table("plain");
    client.createTable(TableSpec.of(name, Column.of("id", "BIGINT")), false);
    FluxgateException e =
        assertThrows(FluxgateException.FailedPrecondition.class, () -> client.listPartitions(name));
    assertTrue(e.getMessage().contains("not partitioned"), e.getMessage());
  }

  @Test
  void writesCreatePartitionsAndScansReadThemByName() {
    String name = dayTable();
    PutResult put =
        write(
            WriteRequest.of(name),
            List.of(row(1L, "20261201"), row(2L, "20261202"), row(3L, "20261202")));
    assertEquals(Set.of("20261201", "20261202"), put.partitionOffsets().keySet());
    assertEquals(List.of("20261201", "20261202"), names(client.listPartitions(name)));

    ScanPlan all = client.plan(ScanRequest.of(name));
    assertEquals(4, all.tickets().size(), "one ticket per (partition, bucket)");
    assertEquals(List.of("20261201", "20261202"), names(all.meta().partitions()));

    ScanRequest oneDay = ScanRequest.of(name).withPartitions(List.of("20261202"));
    assertEquals(2, client.plan(oneDay).tickets().size());
    Set<Object> ids = new HashSet<>();
    Set<String> seen = new HashSet<>();
    try (Scanner s = client.scan(oneDay)) {
      while (s.next()) {
        seen.add(s.meta().partition());
        ids.addAll(Rows.rows(s.root()).stream().map(r -> r.get(0)).toList());
      }
    }
    assertEquals(Set.of("20261202"), seen);
    assertEquals(Set.of(2L, 3L), ids);

    List<List<Object>> filtered =
        Rows.read(client, ScanRequest.of(name).withFilter(Predicates.eq("dt", "20261201")));
    assertEquals(List.of(row(1L, "20261201")), filtered);
    assertEquals(3, client.rowCount(name).getAsLong());
  }

  @Test
  void aTicketOfADroppedPartitionIsToldFromOtherNotFounds() {
    String name = dayTable();
    write(WriteRequest.of(name), List.of(row(1L, "20261201"), row(2L, "20261202")));
    ScanPlan plan = client.plan(ScanRequest.of(name));
    byte[] dropped = plan.tickets().get(0); // partitions in name order: 20261201's bucket 0
    byte[] kept = plan.tickets().get(2);
    client.dropPartition(name, Map.of("dt", "20261201"), false);

    try (TicketStream s = client.read(dropped)) {
      assertThrows(FluxgateException.NotFound.class, s::next);
    }
    assertTrue(client.partitionDropped(dropped));
    assertFalse(client.partitionDropped(kept));
    byte[] limited = client.plan(ScanRequest.of(name).withLimit(10)).tickets().get(0);
    assertFalse(client.partitionDropped(limited), "a limited ticket may span partitions");

    // The whole table dropped and created again under its name: not a dropped partition.
    client.dropTable(name, false);
    dayTable(name);
    client.createPartition(name, Map.of("dt", "20261202"), false);
    assertFalse(client.partitionDropped(dropped));
    client.dropTable(name, false);
    assertFalse(client.partitionDropped(kept));
  }

  @Test
  void offsetsArePerPartition() {
    String name = dayTable();
    write(WriteRequest.of(name), List.of(row(1L, "20261201"), row(2L, "20261202")));
    Map<String, Map<Integer, Long>> latest =
        client.listPartitionOffsets(name, Position.LATEST, null);
    assertEquals(Set.of("20261201", "20261202"), latest.keySet());
    assertEquals(1L, latest.get("20261201").values().stream().mapToLong(Long::longValue).sum());
    assertEquals(
        Set.of("20261202"),
        client.listPartitionOffsets(name, Position.EARLIEST, List.of("20261202")).keySet());

    // A startup at the latest offsets of the first day reads only the second day's row.
    Map<String, Map<Integer, Long>> from = Map.of("20261201", latest.get("20261201"));
    assertEquals(
        List.of(row(2L, "20261202")),
        Rows.read(client, ScanRequest.of(name).withStartup(Position.atPartitionOffsets(from))));
  }

  @Test
  void aWriteToAMissingPartitionFailsWhenCreationIsOff() {
    String name = dayTable();
    FluxgateException e =
        assertThrows(
            FluxgateException.NotFound.class,
            () ->
                write(
                    WriteRequest.of(name).withCreatePartitions(false),
                    List.of(row(1L, "20261203"))));
    assertTrue(e.getMessage().contains("dt=20261203"), e.getMessage());
    assertEquals(List.of(), client.listPartitions(name));
  }

  /** A primary-key table (id, region, v) partitioned by region. */
  private String regionTable() {
    String name = table("regions");
    client.createTable(
        TableSpec.of(
                name,
                Column.notNull("id", "BIGINT"),
                Column.notNull("region", "STRING"),
                Column.of("v", "INT"))
            .withPrimaryKey("id", "region")
            .withPartitionKeys("region"),
        false);
    return name;
  }

  @Test
  void keyedPartitionsAreUpsertedAndUndoneOneByOne() {
    String name = regionTable();
    write(WriteRequest.of(name), List.of(row(1L, "eu", 10), row(1L, "us", 20)));
    Map<String, Map<Integer, Long>> before =
        client.listPartitionOffsets(name, Position.LATEST, null);
    write(WriteRequest.of(name), List.of(row(1L, "eu", 11), row(1L, "us", 21)));
    assertEquals(
        List.of(row(1L, "eu", 11), row(1L, "us", 21)),
        sortedByRegion(Rows.read(client, ScanRequest.of(name))));

    UndoResult undo = client.undoPartitions(name, Map.of("eu", before.get("eu")));
    assertEquals(1, undo.undoneKeys());
    assertEquals(Set.of("eu"), undo.partitionOffsets().keySet());
    assertEquals(
        List.of(row(1L, "eu", 10), row(1L, "us", 21)),
        sortedByRegion(Rows.read(client, ScanRequest.of(name))));
  }

  @Test
  void keysOfAPartitionedTableAreLookedUpInTheirPartition() {
    String name = regionTable();
    write(WriteRequest.of(name), List.of(row(1L, "eu", 10), row(1L, "us", 20), row(2L, "eu", 30)));
    // A key of a partition that does not exist has no row.
    try (Lookuper l = client.lookup(LookupRequest.of(name).withColumns("v"));
        VectorSchemaRoot keys =
            Rows.batch(
                allocator,
                Rows.schema(client, name, "id", "region"),
                List.of(row(1L, "ap"), row(1L, "us"), row(2L, "eu"), row(2L, "us")));
        LookupResult r = l.lookup(keys)) {
      assertEquals(List.of(row(1, 20), row(2, 30)), Rows.rows(r.rows()));
    }
    assertEquals(List.of("eu", "us"), names(client.listPartitions(name)));
  }

  private static List<List<Object>> sortedByRegion(List<List<Object>> rows) {
    return rows.stream()
        .sorted((a, b) -> ((String) a.get(1)).compareTo((String) b.get(1)))
        .toList();
  }
}
