package io.fluxgate.client;

import static io.fluxgate.client.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.Test;

class LookupTest extends ServerTest {

  /** A primary-key table (tenant, id) bucketed by tenant, so it has a prefix index. */
  private String keyed() {
    String name = table("users");
    client.createTable(
        TableSpec.of(
                name,
                Column.of("tenant", "BIGINT"),
                Column.of("id", "BIGINT"),
                Column.of("name", "STRING"))
            .withPrimaryKey("tenant", "id")
            .withOptions(Map.of("bucket.key", "tenant", "bucket.num", "2")),
        false);
    try (VectorSchemaRoot batch =
            Rows.batch(
                allocator,
                Rows.schema(client, name),
                List.of(row(1L, 1L, "a"), row(1L, 2L, "b"), row(2L, 1L, "c")));
        TableWriter w = client.newWriter(WriteRequest.of(name))) {
      w.write(batch);
    }
    return name;
  }

  @Test
  void pointLookupReturnsMatchesByKeyIndex() {
    String name = keyed();
    try (Lookuper l = client.lookup(LookupRequest.of(name).withColumns("name"));
        VectorSchemaRoot keys =
            Rows.batch(
                allocator,
                Rows.schema(client, name, "tenant", "id"),
                List.of(row(2L, 1L), row(9L, 9L), row(1L, 2L)));
        LookupResult answer = l.lookup(keys)) {
      assertEquals(new LookupMeta(3, 2), answer.meta());
      assertEquals(SystemColumns.KEY_INDEX, answer.rows().getSchema().getFields().get(0).getName());
      assertEquals(List.of(row(0, "c"), row(2, "b")), Rows.rows(answer.rows()));
    }
  }

  @Test
  void pipelinedLookupsAnswerInOrder() {
    String name = keyed();
    try (Lookuper l = client.lookup(LookupRequest.of(name).withColumns("name"))) {
      for (long id = 1; id <= 3; id++) {
        try (VectorSchemaRoot keys =
            Rows.batch(
                allocator, Rows.schema(client, name, "tenant", "id"), List.of(row(1L, id)))) {
          l.send(keys);
        }
      }
      for (String want : new String[] {"a", "b", null}) {
        try (LookupResult answer = l.recv()) {
          assertEquals(want == null ? List.of() : List.of(row(0, want)), Rows.rows(answer.rows()));
        }
      }
    }
  }

  @Test
  void inlineLookupThroughAPlan() {
    String name = keyed();
    ScanPlan plan =
        client.planLookup(
            LookupRequest.of(name).withColumns("name"),
            List.of(
                Map.of("tenant", 1, "id", 2),
                Map.of("tenant", 7, "id", 7),
                Map.of("tenant", 2, "id", 1)));
    assertEquals(1, plan.tickets().size());
    try (TicketStream s = client.read(plan.tickets().get(0))) {
      List<List<Object>> rows = new java.util.ArrayList<>();
      while (s.next()) {
        rows.addAll(Rows.rows(s.root()));
      }
      assertEquals(List.of(row(0, "b"), row(2, "c")), rows);
    }
  }

  @Test
  void prefixLookupReturnsEveryRowOfThePrefix() {
    String name = keyed();
    try (Lookuper l = client.lookup(LookupRequest.of(name).withColumns("id", "name").asPrefix());
        VectorSchemaRoot keys =
            Rows.batch(allocator, Rows.schema(client, name, "tenant"), List.of(row(1L)));
        LookupResult answer = l.lookup(keys)) {
      assertEquals(List.of(row(0, 1L, "a"), row(0, 2L, "b")), Rows.rows(answer.rows()));
    }
  }

  @Test
  void insertIfNotExistsAssignsIdsInKeyOrder() {
    String name = table("dict");
    client.createTable(
        TableSpec.of(name, Column.of("word", "STRING"), Column.of("uid", "BIGINT"))
            .withPrimaryKey("word")
            .withOptions(Map.of("auto-increment.fields", "uid")),
        false);
    try (Lookuper l =
            client.lookup(LookupRequest.of(name).withColumns("uid").insertingIfNotExists());
        VectorSchemaRoot keys =
            Rows.batch(
                allocator,
                Rows.schema(client, name, "word"),
                List.of(row("user_a"), row("user_b"), row("user_a"), row("user_c")));
        LookupResult answer = l.lookup(keys)) {
      assertEquals(
          List.of(row(0, 1L), row(1, 2L), row(2, 1L), row(3, 3L)), Rows.rows(answer.rows()));
    }
    assertEquals(3, Rows.read(client, ScanRequest.of(name)).size());
  }

  /**
   * An answer over 4 MiB comes in several messages (each under gRPC's default limit), joined into
   * one answer; the next key batch's answer follows it.
   */
  @Test
  void largeAnswersArriveWhole() {
    String name = table("wide");
    client.createTable(
        TableSpec.of(name, Column.of("k", "BIGINT"), Column.of("s", "STRING"))
            .withPrimaryKey("k")
            .withOptions(Map.of("bucket.num", "2")),
        false);
    int n = 5_000;
    String pad = "p".repeat(1_000);
    List<List<Object>> rows = new java.util.ArrayList<>();
    List<List<Object>> keys = new java.util.ArrayList<>();
    for (long k = 0; k < n; k++) {
      rows.add(row(k, pad));
      keys.add(row(k));
    }
    try (VectorSchemaRoot batch = Rows.batch(allocator, Rows.schema(client, name), rows);
        TableWriter w = client.newWriter(WriteRequest.of(name))) {
      w.write(batch);
    }
    try (Lookuper l = client.lookup(LookupRequest.of(name));
        VectorSchemaRoot all = Rows.batch(allocator, Rows.schema(client, name, "k"), keys);
        VectorSchemaRoot one =
            Rows.batch(allocator, Rows.schema(client, name, "k"), List.of(row(7L)))) {
      l.send(all);
      l.send(one);
      try (LookupResult answer = l.recv()) {
        assertEquals(new LookupMeta(n, n), answer.meta());
        assertEquals(n, answer.rows().getRowCount());
      }
      try (LookupResult answer = l.recv()) {
        assertEquals(List.of(row(0, 7L, pad)), Rows.rows(answer.rows()));
      }
    }
  }

  @Test
  void lookupOfAMissingTableIsNotFound() {
    try (Lookuper l = client.lookup(LookupRequest.of("fluss.no_such_table"));
        VectorSchemaRoot keys =
            Rows.batch(
                allocator, Rows.schema(client, keyed(), "tenant", "id"), List.of(row(1L, 1L)))) {
      FluxgateException.NotFound e =
          assertThrows(FluxgateException.NotFound.class, () -> l.lookup(keys).close());
      assertTrue(e.getMessage().contains("no_such_table"), e.getMessage());
    }
  }
}
