package io.fluxgate.flink.catalog;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.FluxgateServer;
import io.fluxgate.flink.ServerExtension;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.flink.table.api.EnvironmentSettings;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.TableEnvironment;
import org.apache.flink.table.api.ValidationException;
import org.apache.flink.table.catalog.Catalog;
import org.apache.flink.table.catalog.CatalogBaseTable;
import org.apache.flink.table.catalog.ObjectPath;
import org.apache.flink.types.Row;
import org.apache.flink.util.CloseableIterator;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** The catalog's DDL against the real server, through Flink SQL as a user writes it. */
@Timeout(120)
public class CatalogTest {
  @RegisterExtension static final ServerExtension SERVER = new ServerExtension();

  static TableEnvironment env;

  @BeforeAll
  static void start() throws Exception {
    env = TableEnvironment.create(EnvironmentSettings.inBatchMode());
    env.executeSql("CREATE CATALOG fg WITH ('type'='fluxgate', 'endpoint'='" + SERVER.uri() + "')");
    env.executeSql("USE CATALOG fg");
  }

  private static List<Row> rows(String sql) throws Exception {
    List<Row> out = new ArrayList<>();
    try (CloseableIterator<Row> it = env.executeSql(sql).collect()) {
      it.forEachRemaining(out::add);
    }
    return out;
  }

  private static Catalog catalog() {
    return env.getCatalog("fg").orElseThrow();
  }

  @Test
  void createDescribeAlterDropTable() throws Exception {
    env.executeSql("CREATE DATABASE ddl");
    assertTrue(catalog().listDatabases().contains("ddl"));
    env.executeSql(
        "CREATE TABLE ddl.orders ("
            + " id BIGINT COMMENT 'the key', amount DECIMAL(10,2), note STRING,"
            + " PRIMARY KEY (id) NOT ENFORCED) COMMENT 'orders'"
            + " WITH ('bucket.num'='3', 'table.merge-engine'='aggregation',"
            + " 'fields.amount.agg'='sum')");
    assertEquals(List.of(Row.of("orders")), rows("SHOW TABLES FROM ddl"));

    CatalogBaseTable t = catalog().getTable(new ObjectPath("ddl", "orders"));
    Schema schema = t.getUnresolvedSchema();
    assertEquals(
        List.of("id", "amount", "note"),
        schema.getColumns().stream().map(Schema.UnresolvedColumn::getName).toList());
    assertEquals(List.of("id"), schema.getPrimaryKey().orElseThrow().getColumnNames());
    assertEquals("orders", t.getComment());
    assertEquals("3", t.getOptions().get("bucket.num"));
    assertEquals("sum", t.getOptions().get("fields.amount.agg"));
    assertEquals("aggregation", t.getOptions().get("table.merge-engine"));
    assertEquals("the key", schema.getColumns().get(0).getComment().orElseThrow());

    env.executeSql("ALTER TABLE ddl.orders ADD extra INT");
    assertEquals(
        List.of("id", "amount", "note", "extra"),
        catalog()
            .getTable(new ObjectPath("ddl", "orders"))
            .getUnresolvedSchema()
            .getColumns()
            .stream()
            .map(Schema.UnresolvedColumn::getName)
            .toList());

    env.executeSql("DROP TABLE ddl.orders");
    assertFalse(catalog().tableExists(new ObjectPath("ddl", "orders")));
    env.executeSql("DROP DATABASE ddl");
    assertFalse(catalog().databaseExists("ddl"));
  }

  @Test
  void viewsResolveAsTablesWithTheirSystemColumns() throws Exception {
    env.executeSql("CREATE DATABASE IF NOT EXISTS vw");
    env.executeSql(
        "CREATE TABLE vw.t (k INT, v STRING, PRIMARY KEY (k) NOT ENFORCED)"
            + " WITH ('table.datalake.enabled'='true')");
    CatalogBaseTable changelog = catalog().getTable(new ObjectPath("vw", "t$changelog"));
    assertEquals(
        List.of("_change_type", "_log_offset", "_commit_timestamp", "k", "v"),
        changelog.getUnresolvedSchema().getColumns().stream()
            .map(Schema.UnresolvedColumn::getName)
            .toList());
    assertTrue(changelog.getUnresolvedSchema().getPrimaryKey().isEmpty());
    CatalogBaseTable lake = catalog().getTable(new ObjectPath("vw", "t$lake"));
    assertEquals(
        List.of("k", "v", "__bucket", "__offset", "__timestamp"),
        lake.getUnresolvedSchema().getColumns().stream()
            .map(Schema.UnresolvedColumn::getName)
            .toList());
    ValidationException e =
        assertThrows(
            ValidationException.class, () -> catalog().getTable(new ObjectPath("vw", "t$nope")));
    assertTrue(e.getMessage().contains("$nope"), e.getMessage());
  }

  @Test
  void everyTypeRoundTripsThroughTheCatalog() throws Exception {
    env.executeSql("CREATE DATABASE IF NOT EXISTS types");
    String columns =
        "c_bool BOOLEAN, c_tiny TINYINT, c_small SMALLINT, c_int INT, c_big BIGINT, c_float FLOAT,"
            + " c_double DOUBLE, c_dec DECIMAL(38,10), c_dec2 DECIMAL(5,0), c_string STRING,"
            + " c_varchar VARCHAR(20), c_char CHAR(3), c_bytes BYTES, c_varbinary VARBINARY(9),"
            + " c_binary BINARY(4), c_date DATE, c_time TIME(0), c_time3 TIME(3), c_ts0"
            + " TIMESTAMP(0), c_ts3 TIMESTAMP(3), c_ts6 TIMESTAMP(6), c_ts9 TIMESTAMP(9), c_ltz3"
            + " TIMESTAMP_LTZ(3), c_ltz6 TIMESTAMP_LTZ(6), c_ltz9 TIMESTAMP_LTZ(9), c_array"
            + " ARRAY<INT NOT NULL>, c_map MAP<STRING, DOUBLE>, c_row ROW<a INT, b ARRAY<STRING>, c"
            + " ROW<d DATE NOT NULL>>, c_notnull BIGINT NOT NULL";
    env.executeSql("CREATE TABLE types.t (" + columns + ")");
    env.executeSql(
        "CREATE TEMPORARY TABLE default_catalog.default_database.expected ("
            + columns
            + ") WITH ('connector'='datagen')");
    assertEquals(
        env.from("default_catalog.default_database.expected").getResolvedSchema().toString(),
        env.from("fg.types.t").getResolvedSchema().toString());
  }

  @Test
  void unknownTableOptionIsNamed() {
    String msg =
        validationMessage(
            () -> env.executeSql("CREATE TABLE fluss.bad_option (a INT) WITH ('nope'='1')"));
    assertTrue(msg.contains("unsupported option 'nope'"), msg);
  }

  @Test
  void unsupportedTypeIsNamed() {
    String msg =
        validationMessage(
            () -> env.executeSql("CREATE TABLE fluss.bad_type (a INT, m MULTISET<INT>)"));
    assertTrue(msg.contains("column m: type MULTISET<INT> is not supported"), msg);
  }

  @Test
  void unknownCatalogOptionIsNamed() {
    ValidationException e =
        assertThrows(
            ValidationException.class,
            () ->
                env.executeSql(
                    "CREATE CATALOG bad WITH ('type'='fluxgate', 'endpoint'='"
                        + SERVER.uri()
                        + "', 'end-point'='x')"));
    assertTrue(rootMessages(e).contains("end-point"), rootMessages(e));
  }

  @Test
  void unreachableEndpointFailsAtCreateCatalog() throws Exception {
    int closedPort;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    Exception e =
        assertThrows(
            Exception.class,
            () ->
                env.executeSql(
                    "CREATE CATALOG down WITH ('type'='fluxgate', 'endpoint'='grpc://127.0.0.1:"
                        + closedPort
                        + "')"));
    String msg = rootMessages(e);
    assertTrue(msg.contains("cannot connect to Connection[grpc://127.0.0.1:" + closedPort), msg);
  }

  @Test
  void createOfAnExistingTableIsFlinksTableAlreadyExist() {
    env.executeSql("CREATE TABLE fluss.twice (a INT)");
    Throwable thrown =
        assertThrows(Throwable.class, () -> env.executeSql("CREATE TABLE fluss.twice (a INT)"));
    boolean found = false;
    for (Throwable c = thrown; c != null; c = c.getCause()) {
      found |= c instanceof org.apache.flink.table.catalog.exceptions.TableAlreadyExistException;
    }
    assertTrue(found, rootMessages(thrown));
    env.executeSql("CREATE TABLE IF NOT EXISTS fluss.twice (a INT)");
  }

  /** A table declared outside the catalog connects when planned: a wrong endpoint is named. */
  @Test
  void unreachableEndpointOfAConnectorTableIsNamed() throws Exception {
    int closedPort;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    String endpoint = "grpc://127.0.0.1:" + closedPort;
    env.executeSql(
        "CREATE TEMPORARY TABLE default_catalog.default_database.away (a INT) WITH"
            + " ('connector'='fluxgate', 'endpoint'='"
            + endpoint
            + "', 'table'='fluss.away')");
    String read =
        rootMessages(
            assertThrows(
                Throwable.class,
                () -> rows("SELECT * FROM default_catalog.default_database.away")));
    assertTrue(read.contains(endpoint), read);
    String write =
        rootMessages(
            assertThrows(
                Throwable.class,
                () ->
                    env.executeSql("INSERT INTO default_catalog.default_database.away VALUES (1)")
                        .await()));
    assertTrue(write.contains(endpoint), write);
  }

  @Test
  void queryOptionsInCreateTableSayWhereTheyGo() {
    for (String option :
        List.of(
            "sink.producer-id", "sink.distribution-mode", "scan.startup.mode", "lookup.async")) {
      String msg =
          validationMessage(
              () ->
                  env.executeSql(
                      "CREATE TABLE fluss.with_query_option (a INT) WITH ('" + option + "'='x')"));
      assertTrue(msg.contains("set it on the catalog or per query"), msg);
    }
  }

  @Test
  void wrongPasswordFailsAtCreateCatalog(@TempDir Path authDir) throws Exception {
    String hash = FluxgateServer.run("right-pass\n", "auth", "hash-password");
    Files.writeString(
        authDir.resolve("users.json"),
        "{\"users\": [{\"name\": \"alice\", \"password_bcrypt\": \""
            + hash
            + "\", \"admin\": true}]}");
    try (FluxgateServer secured =
        FluxgateServer.start(authDir, "--users", authDir.resolve("users.json").toString())) {
      String base =
          "'type'='fluxgate', 'endpoint'='" + secured.uri() + "', 'username'='alice', 'password'=";
      Exception e =
          assertThrows(
              Exception.class,
              () -> env.executeSql("CREATE CATALOG wrong WITH (" + base + "'wrong-pass')"));
      String msg = rootMessages(e);
      assertTrue(msg.contains("Unauthenticated") || msg.contains("UNAUTHENTICATED"), msg);

      env.executeSql("CREATE CATALOG right_pass WITH (" + base + "'right-pass')");
      assertTrue(env.getCatalog("right_pass").orElseThrow().listDatabases().contains("fluss"));
    }
  }

  /** The message of the ValidationException that action throws, perhaps wrapped by Flink. */
  private static String validationMessage(org.junit.jupiter.api.function.Executable action) {
    Throwable thrown = assertThrows(Throwable.class, action);
    for (Throwable c = thrown; c != null; c = c.getCause()) {
      if (c instanceof ValidationException) {
        return c.getMessage();
      }
    }
    throw new AssertionError("no ValidationException in " + rootMessages(thrown), thrown);
  }

  /** Every message of the cause chain, since Flink wraps the catalog's exception. */
  private static String rootMessages(Throwable t) {
    StringBuilder b = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      b.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage()).append("\n");
    }
    return b.toString();
  }
}
