package io.fluxgate.flink.lookup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.fluxgate.client.FluxgateClient;
import io.fluxgate.client.FluxgateException;
import io.fluxgate.client.FluxgateServer;
import io.fluxgate.flink.CuttableProxy;
import io.fluxgate.flink.Sql;
import java.nio.file.Path;
import java.util.List;
import org.apache.arrow.memory.RootAllocator;
import org.apache.flink.table.data.GenericRowData;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.data.StringData;
import org.apache.flink.table.types.logical.IntType;
import org.apache.flink.table.types.logical.LogicalType;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.VarCharType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** 'lookup.max-retries': a lookup stream the network broke is reopened and asked again. */
@Timeout(60)
public class LookupRetryTest {
  @TempDir Path dir;

  private static final RowType PRODUCED =
      RowType.of(
          new LogicalType[] {new IntType(false), new VarCharType(VarCharType.MAX_LENGTH)},
          new String[] {"id", "name"});

  private static LookupSpec spec(int maxRetries) {
    return new LookupSpec(
        "fluss.names",
        PRODUCED,
        List.of("id"),
        new int[] {0},
        new int[0],
        new int[0],
        false,
        false,
        maxRetries);
  }

  @Test
  void aBrokenStreamIsRetriedUpToMaxRetries() throws Exception {
    try (FluxgateServer server = FluxgateServer.start(dir);
        Sql sql = new Sql(server.uri());
        CuttableProxy proxy = new CuttableProxy(server.port)) {
      sql.env(true)
          .executeSql(
              "CREATE TABLE fluss.names (id INT, name STRING, PRIMARY KEY (id) NOT ENFORCED)");
      sql.env(true).executeSql("INSERT INTO fluss.names VALUES (1, 'one')").await();
      List<RowData> key = List.of(GenericRowData.of(1));
      List<List<RowData>> one =
          List.of(List.of(GenericRowData.of(1, StringData.fromString("one"))));
      try (RootAllocator allocator = new RootAllocator();
          FluxgateClient client = FluxgateClient.connect(proxy.uri());
          LookupSession retrying = new LookupSession(client, allocator, spec(3));
          LookupSession once = new LookupSession(client, allocator, spec(0))) {
        assertEquals(one, retrying.lookup(key));
        assertEquals(one, once.lookup(key));
        proxy.cut();
        assertEquals(one, retrying.lookup(key));
        assertThrows(FluxgateException.Unavailable.class, () -> once.lookup(key));
      }
    }
  }
}
