package io.fluxgate.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DdlTest extends ServerTest {

  @Test
  void databasesAreCreatedListedAndDropped() {
    client.createDatabase("ddl_db", false);
    client.createDatabase("ddl_db", true); // if_not_exists: no error
    assertTrue(
        client.listDatabases().containsAll(List.of("fluss", "ddl_db")),
        client.listDatabases().toString());

    FluxgateException.AlreadyExists e =
        assertThrows(
            FluxgateException.AlreadyExists.class, () -> client.createDatabase("ddl_db", false));
    assertTrue(e.getMessage().contains("ddl_db"), e.getMessage());

    client.createTable(TableSpec.of("ddl_db.t", Column.of("a", "INT")), false);
    assertThrows(FluxgateException.class, () -> client.dropDatabase("ddl_db", false, false));
    client.dropDatabase("ddl_db", false, true);
    assertFalse(client.listDatabases().contains("ddl_db"));
    client.dropDatabase("ddl_db", true, false); // if_exists: no error
  }

  @Test
  void createdTableIsDescribedWithDefaultsFilledIn() {
    String name = table("orders");
    TableSpec spec =
        TableSpec.of(
                name,
                Column.notNull("order_id", "BIGINT").withComment("the key"),
                Column.of("user_id", "BIGINT"),
                Column.of("amount", "DECIMAL(10,2)"))
            .withPrimaryKey("order_id")
            .withOptions(Map.of("bucket.num", "2"))
            .withComment("orders table");
    TableInfo created = client.createTable(spec, false);
    TableInfo described = client.describeTable(name);

    assertEquals(created, described);
    assertEquals("primary_key", described.kind());
    assertTrue(described.hasPrimaryKey());
    assertEquals(List.of("order_id"), described.primaryKey());
    assertEquals(spec.columns(), described.columns());
    assertEquals("orders table", described.comment());
    assertEquals("2", described.options().get("bucket.num"));
    assertEquals("allow", described.options().get("table.delete.behavior"));
    assertEquals("zstd", described.options().get("table.log.arrow.compression.type"));
    assertTrue(described.tableId() > 0);
    assertTrue(described.createdAt() > 0);
    assertTrue(
        described.indexes().contains(new TableInfo.Index("primary_key", List.of("order_id"))),
        described.indexes().toString());
    assertTrue(client.listTables("fluss").stream().anyMatch(t -> t.table().equals(name)));
  }

  @Test
  void createIfNotExistsReturnsTheExistingTable() {
    String name = table("again");
    TableInfo first = client.createTable(TableSpec.of(name, Column.of("a", "INT")), false);
    TableInfo second = client.createTable(TableSpec.of(name, Column.of("a", "INT")), true);
    assertEquals(first.tableId(), second.tableId());
  }

  @Test
  void alterSetsOptionsAndAddsColumns() {
    String name = table("alter");
    TableInfo before = client.createTable(TableSpec.of(name, Column.of("a", "INT")), false);
    TableInfo after =
        client.alterTable(
            AlterRequest.of(name)
                .withSet(Map.of("table.log.ttl", "2d"))
                .withAddColumns(Column.of("b", "STRING")));
    assertEquals("2d", after.options().get("table.log.ttl"));
    assertEquals(List.of(Column.of("a", "INT"), Column.of("b", "STRING")), after.columns());
    assertEquals(before.schemaId() + 1, after.schemaId());
  }

  @Test
  void droppedTableIsNotFound() {
    String name = table("gone");
    client.createTable(TableSpec.of(name, Column.of("a", "INT")), false);
    client.dropTable(name, false);
    FluxgateException.NotFound e =
        assertThrows(FluxgateException.NotFound.class, () -> client.describeTable(name));
    assertTrue(e.getMessage().contains(name), e.getMessage());
    client.dropTable(name, true);
    assertThrows(FluxgateException.NotFound.class, () -> client.dropTable(name, false));
  }

  @Test
  void errorsCarryTheServersMessageAndKind() {
    String name = table("bad");
    FluxgateException.InvalidArgument badOption =
        assertThrows(
            FluxgateException.InvalidArgument.class,
            () ->
                client.createTable(
                    TableSpec.of(name, Column.of("a", "INT"))
                        .withOptions(Map.of("no.such.option", "1")),
                    false));
    assertTrue(badOption.getMessage().contains("no.such.option"), badOption.getMessage());
    assertEquals(io.grpc.Status.Code.INVALID_ARGUMENT, badOption.code());

    FluxgateException.InvalidArgument badType =
        assertThrows(
            FluxgateException.InvalidArgument.class,
            () -> client.createTable(TableSpec.of(name, Column.of("a", "NOT_A_TYPE")), false));
    assertTrue(badType.getMessage().contains("NOT_A_TYPE"), badType.getMessage());

    client.createTable(TableSpec.of(name, Column.of("a", "INT")), false);
    FluxgateException.FailedPrecondition upsertToLog =
        assertThrows(
            FluxgateException.FailedPrecondition.class,
            () -> {
              try (var root =
                      Rows.batch(allocator, Rows.schema(client, name), List.of(Rows.row(1)));
                  TableWriter w =
                      client.newWriter(WriteRequest.of(name).withMode(WriteMode.UPSERT))) {
                w.write(root);
              }
            });
    assertTrue(upsertToLog.getMessage().contains("upsert"), upsertToLog.getMessage());

    FluxgateException.NotFound noColumn =
        assertThrows(
            FluxgateException.NotFound.class,
            () -> client.plan(ScanRequest.of(name).withColumns("nope")));
    assertTrue(noColumn.getMessage().contains("nope"), noColumn.getMessage());
    assertNotEquals(null, noColumn.getCause());
  }
}
