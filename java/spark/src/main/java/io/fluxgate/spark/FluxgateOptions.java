package io.fluxgate.spark;

import io.fluxgate.client.ConnectionSettings;
import io.fluxgate.client.FluxgateClient;
import java.io.Serializable;
import java.util.Map;
import java.util.function.Function;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Where a fluxgate server is and how to log in: the connector's connection options, read by the
 * client as the Flink connector's are. Serializable, so executors connect on their own.
 *
 * <ul>
 *   <li>{@code endpoint}: grpc://host:port, grpc+tls://host:port or host:port (TLS with the tls
 *       files) (default 127.0.0.1:8815)
 *   <li>{@code username}, {@code password}: basic-to-bearer handshake
 *   <li>{@code token}: a static bearer token
 *   <li>{@code tls.ca-file}, {@code tls.cert-file}, {@code tls.key-file}: PEM files
 * </ul>
 */
record FluxgateOptions(ConnectionSettings settings) implements Serializable {
  static final String TABLE = "table";

  /** Reads the connection keys of a Spark options map (keys are case-insensitive in Spark). */
  static FluxgateOptions from(Map<String, String> options) {
    return new FluxgateOptions(ConnectionSettings.from(options::get, FluxgateClient.DEFAULT_URI));
  }

  String username() {
    return settings.username();
  }

  /** Connects, reading into allocator. */
  FluxgateClient connect(BufferAllocator allocator) {
    return settings.connect(allocator);
  }

  /** Runs fn on a client of {@link Clients}, for the driver's planning calls. */
  <T> T call(Function<FluxgateClient, T> fn) {
    try (Clients.Lease lease = Clients.lease(this)) {
      return fn.apply(lease.client());
    }
  }

  @Override
  public String toString() {
    return settings.endpoint(); // never the secrets
  }
}
