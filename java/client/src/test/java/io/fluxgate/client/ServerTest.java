package io.fluxgate.client;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.arrow.memory.RootAllocator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A test class against one server without authentication. Each test gets a client over its own
 * RootAllocator, and must have freed every buffer by its end.
 */
@Timeout(60)
abstract class ServerTest {
  private static final AtomicInteger TABLES = new AtomicInteger();

  @TempDir static Path dir;
  static FluxgateServer server;

  RootAllocator allocator;
  FluxgateClient client;

  @BeforeAll
  static void startServer() throws Exception {
    server = FluxgateServer.start(dir);
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  @BeforeEach
  void connect() {
    allocator = new RootAllocator();
    client =
        FluxgateClient.connect(server.uri(), ConnectOptions.defaults().withAllocator(allocator));
  }

  @AfterEach
  void closeAndCheckMemory() {
    client.close();
    assertEquals(0, allocator.getAllocatedMemory(), "Arrow memory leaked by the test");
    allocator.close();
  }

  /** A table name no other test uses. */
  static String table(String base) {
    return "fluss." + base + "_" + TABLES.incrementAndGet();
  }
}
