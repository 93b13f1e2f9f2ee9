package io.fluxgate.flink;

import io.fluxgate.client.ConnectionSettings;
import io.fluxgate.client.FluxgateServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The real fluxgate server for one test class, on a fresh data directory: a static
 * {@code @RegisterExtension} field, beside the class's {@link #cluster}.
 */
public final class ServerExtension implements BeforeAllCallback, AfterAllCallback {
  private final String[] args;
  private Path dir;
  private FluxgateServer server;

  public ServerExtension(String... args) {
    this.args = args;
  }

  /** A MiniCluster of one TaskManager with the given slots, shared by the class's tests. */
  public static MiniClusterExtension cluster(int slots) {
    return new MiniClusterExtension(
        new MiniClusterResourceConfiguration.Builder()
            .setNumberTaskManagers(1)
            .setNumberSlotsPerTaskManager(slots)
            .build());
  }

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    dir = Files.createTempDirectory("fluxgate-flink-test");
    server = FluxgateServer.start(dir, args);
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    try {
      if (server != null) {
        server.close();
      }
    } finally {
      deleteTree(dir);
    }
  }

  public String uri() {
    return server.uri();
  }

  /** How a source or sink connects to the server, without credentials. */
  public ConnectionSettings connection() {
    return ConnectionSettings.of(uri());
  }

  private static void deleteTree(Path root) throws IOException {
    try (Stream<Path> paths = Files.walk(root)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
