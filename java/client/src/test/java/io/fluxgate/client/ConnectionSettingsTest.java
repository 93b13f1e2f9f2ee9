package io.fluxgate.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The connectors' connection settings, read once by their keys. */
class ConnectionSettingsTest {
  @Test
  void everyKeyIsReadAndAnUnsetEndpointIsTheDefault() {
    Map<String, String> set =
        Map.of(
            "username", "alice",
            "password", "secret",
            "token", "tok",
            "tls.ca-file", "/ca.pem",
            "tls.cert-file", "/c.pem",
            "tls.key-file", "/k.pem");
    ConnectionSettings s = ConnectionSettings.from(set::get, "grpc://127.0.0.1:8815");
    assertEquals(
        new ConnectionSettings(
            "grpc://127.0.0.1:8815", "alice", "secret", "tok", "/ca.pem", "/c.pem", "/k.pem"),
        s);
    ConnectOptions o = s.options();
    assertEquals("alice", o.username());
    assertNull(o.token(), "with a username the token is not used");
    assertEquals(Path.of("/ca.pem"), o.tlsCaFile());
    assertEquals(Path.of("/k.pem"), o.tlsKeyFile());
    assertEquals(
        "grpc+tls://h:1",
        ConnectionSettings.from(Map.of("endpoint", "grpc+tls://h:1")::get, null).endpoint());
  }

  @Test
  void itsTextShowsNoSecret() {
    ConnectionSettings s =
        new ConnectionSettings("grpc://h:1", "alice", "pw", "tok", null, null, null);
    assertEquals("Connection[grpc://h:1 as alice]", s.toString());
    assertFalse(s.toString().contains("pw") || s.toString().contains("tok"));
  }
}
