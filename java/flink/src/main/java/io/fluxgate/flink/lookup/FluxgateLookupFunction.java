package io.fluxgate.flink.lookup;

import io.fluxgate.client.ConnectionSettings;
import io.fluxgate.client.FluxgateClient;
import io.fluxgate.flink.Release;
import java.util.Collection;
import java.util.List;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.functions.FunctionContext;
import org.apache.flink.table.functions.LookupFunction;

/** 'lookup.async'='false': each key is one request on the task thread. */
public final class FluxgateLookupFunction extends LookupFunction {
  private final ConnectionSettings connection;
  private final LookupSpec spec;
  private transient BufferAllocator allocator;
  private transient FluxgateClient client;
  private transient LookupSession session;

  FluxgateLookupFunction(ConnectionSettings connection, LookupSpec spec) {
    this.connection = connection;
    this.spec = spec;
  }

  @Override
  public void open(FunctionContext context) {
    allocator = new RootAllocator();
    client = connection.connect();
    session = new LookupSession(client, allocator, spec);
  }

  @Override
  public Collection<RowData> lookup(RowData key) {
    return session.lookup(List.of(key)).get(0);
  }

  @Override
  public void close() {
    Release.all(this, session, client, allocator);
  }
}
