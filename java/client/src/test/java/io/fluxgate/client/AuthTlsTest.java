package io.fluxgate.client;

import static io.fluxgate.client.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import java.nio.file.Path;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A server with users, a static token and mutual TLS (PROTOCOL.md §8), its certificates made by
 * openssl for the test.
 */
@Timeout(60)
class AuthTlsTest {
  private static final String PASSWORD = "s3cret pass";
  private static final String TOKEN = "service-token-0123456789";

  @TempDir static Path dir;
  static FluxgateServer server;

  @BeforeAll
  static void start() throws Exception {
    String hash = FluxgateServer.run(PASSWORD + "\n", "auth", "hash-password");
    String bobHash = FluxgateServer.run("bob-pass\n", "auth", "hash-password");
    server =
        TestCertificates.startMutualTlsServer(
            dir,
            "{\"users\": [{\"name\": \"alice\", \"password_bcrypt\": \""
                + hash
                + "\", \"admin\": true},"
                + " {\"name\": \"bob\", \"password_bcrypt\": \""
                + bobHash
                + "\"}],"
                + " \"tokens\": [{\"name\": \"svc\", \"token_sha256\": \""
                + TestCertificates.tokenSha256(TOKEN)
                + "\", \"admin\": true}]}");
  }

  @AfterAll
  static void stop() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  private static String uri() {
    return "grpc+tls://127.0.0.1:" + server.port;
  }

  /** TLS that trusts the test CA and presents the client certificate. */
  private static ConnectOptions tls() {
    return ConnectOptions.defaults()
        .withTlsCa(dir.resolve("ca.pem"))
        .withClientCert(dir.resolve("client.pem"), dir.resolve("client.key"));
  }

  @Test
  void basicAuthOverMutualTlsReadsAndWrites() {
    try (RootAllocator allocator = new RootAllocator();
        FluxgateClient c =
            FluxgateClient.connect(
                uri(), tls().withBasicAuth("alice", PASSWORD).withAllocator(allocator))) {
      String name = "fluss.secure";
      c.createTable(TableSpec.of(name, Column.of("id", "BIGINT")), true);
      try (VectorSchemaRoot batch =
              Rows.batch(allocator, Rows.schema(c, name), List.of(row(1L), row(2L)));
          TableWriter w = c.newWriter(WriteRequest.of(name))) {
        w.write(batch);
      }
      assertTrue(Rows.read(c, ScanRequest.of(name)).containsAll(List.of(row(1L), row(2L))));
      assertEquals(0, allocator.getAllocatedMemory());
    }
  }

  @Test
  void staticTokenIsSentAsBearer() {
    try (FluxgateClient c = FluxgateClient.connect(uri(), tls().withToken(TOKEN))) {
      assertTrue(c.listDatabases().contains("fluss"));
    }
  }

  /** As in the Go client: a bare host:port given TLS files speaks TLS, not plaintext. */
  @Test
  void bareAddressWithTlsFilesSpeaksTls() {
    try (FluxgateClient c =
        FluxgateClient.connect("127.0.0.1:" + server.port, tls().withToken(TOKEN))) {
      assertTrue(c.listDatabases().contains("fluss"));
    }
  }

  /** A plain-gRPC address with TLS files is a contradiction: refused, naming the address to use. */
  @Test
  void plainAddressWithTlsFilesIsRefused() {
    for (String scheme : List.of("grpc://", "grpc+tcp://")) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class,
              () -> FluxgateClient.connect(scheme + "127.0.0.1:" + server.port, tls()).close());
      assertTrue(
          e.getMessage().contains("use grpc+tls://127.0.0.1:" + server.port), e.getMessage());
    }
  }

  /** The default address is bare, so TLS files alone (Spark's default endpoint) are not refused. */
  @Test
  void defaultAddressWithTlsFilesIsTaken() {
    FluxgateClient.connect(FluxgateClient.DEFAULT_URI, tls().withToken(TOKEN)).close();
  }

  @Test
  void wrongPasswordFailsAtConnect() {
    FluxgateException.Unauthenticated e =
        assertThrows(
            FluxgateException.Unauthenticated.class,
            () -> FluxgateClient.connect(uri(), tls().withBasicAuth("alice", "wrong")).close());
    assertTrue(e.getMessage().contains("alice"), e.getMessage());
  }

  @Test
  void missingOrBadCredentialsAreUnauthenticated() {
    try (FluxgateClient c = FluxgateClient.connect(uri(), tls())) {
      assertThrows(FluxgateException.Unauthenticated.class, c::listDatabases);
    }
    try (FluxgateClient c = FluxgateClient.connect(uri(), tls().withToken("not-the-token"))) {
      assertThrows(FluxgateException.Unauthenticated.class, c::listDatabases);
    }
  }

  @Test
  void userWithoutGrantsIsPermissionDenied() {
    try (FluxgateClient c = FluxgateClient.connect(uri(), tls().withBasicAuth("bob", "bob-pass"))) {
      FluxgateException.PermissionDenied e =
          assertThrows(
              FluxgateException.PermissionDenied.class, () -> c.createDatabase("bobs", false));
      assertTrue(e.getMessage().contains("bob may not create"), e.getMessage());
    }
  }

  @Test
  void withoutClientCertificateTheConnectionFails() {
    try (FluxgateClient c =
        FluxgateClient.connect(
            uri(), ConnectOptions.defaults().withTlsCa(dir.resolve("ca.pem")).withToken(TOKEN))) {
      FluxgateException e = assertThrows(FluxgateException.class, c::listDatabases);
      assertEquals(Status.Code.UNAVAILABLE, e.code(), e.getMessage());
    }
  }

  @Test
  void untrustedServerCertificateFails() {
    try (FluxgateClient c =
        FluxgateClient.connect(
            uri(),
            ConnectOptions.defaults()
                .withClientCert(dir.resolve("client.pem"), dir.resolve("client.key"))
                .withToken(TOKEN))) {
      FluxgateException e = assertThrows(FluxgateException.Unavailable.class, c::listDatabases);
      assertEquals(Status.Code.UNAVAILABLE, e.code());
    }
  }
}
