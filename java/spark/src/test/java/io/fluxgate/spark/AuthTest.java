package io.fluxgate.spark;

import static io.fluxgate.client.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.Column;
import io.fluxgate.client.ConnectOptions;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.FluxgateServer;
import io.fluxgate.client.TableSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import org.apache.spark.sql.DataFrameReader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The connection options with credentials, against a second server that requires them. */
class AuthTest extends SparkServerTest {
  private static final String PASSWORD = "alice-pass";
  private static final String TOKEN = "svc-token";
  private static final String TABLE = "fluss.secured";

  @TempDir static Path authDir;
  static FluxgateServer authServer;

  @BeforeAll
  static void startAuthServer() throws Exception {
    String hash = FluxgateServer.run(PASSWORD + "\n", "auth", "hash-password");
    String tokenHash =
        HexFormat.of()
            .formatHex(
                MessageDigest.getInstance("SHA-256")
                    .digest(TOKEN.getBytes(StandardCharsets.UTF_8)));
    Files.writeString(
        authDir.resolve("users.json"),
        "{\"users\": [{\"name\": \"alice\", \"password_bcrypt\": \""
            + hash
            + "\", \"admin\": true}],"
            + " \"tokens\": [{\"name\": \"svc\", \"token_sha256\": \""
            + tokenHash
            + "\", \"admin\": true}]}");
    authServer = FluxgateServer.start(authDir, "--users", authDir.resolve("users.json").toString());
    try (FluxgateClient admin =
        FluxgateClient.connect(
            authServer.uri(), ConnectOptions.defaults().withBasicAuth("alice", PASSWORD))) {
      admin.createDatabase("fluss", true);
      admin.createTable(TableSpec.of(TABLE, Column.of("id", "BIGINT")), false);
    }
  }

  @AfterAll
  static void stopAuthServer() throws Exception {
    if (authServer != null) {
      authServer.close();
    }
  }

  private static DataFrameReader reader() {
    return spark
        .read()
        .format("fluxgate")
        .option("endpoint", authServer.uri())
        .option("table", TABLE);
  }

  @Test
  void basicAuthAndTokenReadAndWrite() {
    spark
        .range(7, 8)
        .toDF("id")
        .write()
        .format("fluxgate")
        .option("endpoint", authServer.uri())
        .option("table", TABLE)
        .option("token", TOKEN)
        .mode("append")
        .save();
    assertEquals(
        List.of(row(7L)),
        rows(reader().option("username", "alice").option("password", PASSWORD).load()));
    assertEquals(List.of(row(7L)), rows(reader().option("token", TOKEN).load()));
  }

  @Test
  void missingOrWrongCredentialsFailClearly() {
    Exception none = assertThrows(Exception.class, () -> reader().load());
    assertTrue(
        messages(none).contains("UNAUTHENTICATED") || messages(none).contains("nauthenticated"),
        messages(none));
    Exception wrong =
        assertThrows(
            Exception.class,
            () -> reader().option("username", "alice").option("password", "nope").load());
    assertTrue(messages(wrong).contains("handshake"), messages(wrong));
  }
}
