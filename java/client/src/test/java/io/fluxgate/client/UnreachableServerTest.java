package io.fluxgate.client;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/** A wrong address is what a user most likely got wrong: every kind of call names it. */
@Timeout(60)
class UnreachableServerTest {
  @Test
  void everyCallNamesTheServer() throws Exception {
    int closedPort;
    try (ServerSocket s = new ServerSocket(0)) {
      closedPort = s.getLocalPort();
    }
    String uri = "grpc://127.0.0.1:" + closedPort;
    try (FluxgateClient c = FluxgateClient.connect(uri)) {
      assertNamesServer(uri, c::listDatabases);
      assertNamesServer(uri, () -> c.plan(ScanRequest.of("fluss.t")));
      assertNamesServer(uri, () -> c.read(new byte[] {1}).next());
    }
  }

  private static void assertNamesServer(String uri, Executable call) {
    FluxgateException e = assertThrows(FluxgateException.Unavailable.class, call);
    assertTrue(e.getMessage().contains("server " + uri + " unavailable"), e.getMessage());
  }
}
