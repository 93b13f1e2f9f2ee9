package io.fluxgate.spark;

import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.FluxgateClient;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ClientsTest extends SparkServerTest {
  @Test
  void leasesOfTheSameOptionsShareOneClient() {
    FluxgateOptions options = FluxgateOptions.from(Map.of("endpoint", server.uri()));
    FluxgateClient shared;
    try (Clients.Lease a = Clients.lease(options);
        Clients.Lease b = Clients.lease(options)) {
      shared = a.client();
      assertSame(shared, b.client());
      assertTrue(shared.listDatabases().contains("fluss"));
    }
    try (Clients.Lease again = Clients.lease(options)) {
      assertSame(shared, again.client(), "released less than the keep-alive ago, so still open");
      assertTrue(again.client().listDatabases().contains("fluss"));
    }
    FluxgateOptions other = FluxgateOptions.from(Map.of("endpoint", server.uri(), "token", "t"));
    try (Clients.Lease a = Clients.lease(options);
        Clients.Lease b = Clients.lease(other)) {
      assertNotSame(a.client(), b.client(), "other credentials, another client");
    }
  }
}
