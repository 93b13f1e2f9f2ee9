package io.fluxgate.flink.source;

import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.Rows;
import io.fluxgate.client.TableWriter;
import io.fluxgate.client.WriteRequest;
import io.fluxgate.flink.ServerExtension;
import java.util.List;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.flink.connector.testutils.source.reader.TestingReaderContext;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What the tests of {@link FluxgateSourceReader} share: a server for the test class (a static
 * {@code RegisterExtension} field), a client of it, writes, and a streaming scan of a table's log.
 */
public final class ReaderFixture implements BeforeAllCallback, AfterAllCallback {
  private final ServerExtension server = new ServerExtension();
  private FluxgateClient client;

  @Override
  public void beforeAll(ExtensionContext context) throws Exception {
    server.beforeAll(context);
    client = FluxgateClient.connect(server.uri());
  }

  @Override
  public void afterAll(ExtensionContext context) throws Exception {
    try {
      if (client != null) {
        client.close();
      }
    } finally {
      server.afterAll(context);
    }
  }

  FluxgateClient client() {
    return client;
  }

  /** A reader of spec connected to the server, not started. */
  FluxgateSourceReader reader(ScanSpec spec) {
    return FluxgateSourceReader.create(server.connection(), spec, new TestingReaderContext());
  }

  /** An unbounded scan of table's columns from its log's earliest offset. */
  static ScanSpec logScan(String table, boolean partitioned, String... columns) {
    return new ScanSpec(
        table,
        List.of(columns),
        null,
        "earliest",
        null,
        false,
        null,
        false,
        List.of(),
        null,
        partitioned,
        null,
        0);
  }

  /** Writes rows to table in one batch. */
  void write(String table, List<List<Object>> rows) {
    try (VectorSchemaRoot root = Rows.batch(client.allocator(), Rows.schema(client, table), rows);
        TableWriter w = client.newWriter(WriteRequest.of(table))) {
      w.write(root);
    }
  }
}
