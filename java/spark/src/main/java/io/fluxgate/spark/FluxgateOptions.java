package io.fluxgate.spark;

import io.fluxgate.client.ConnectOptions;
import io.fluxgate.client.FluxgateClient;
import java.io.Serializable;
import java.util.Map;
import java.util.function.Function;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Where a fluxgate server is and how to log in: the connector's connection options, the same keys
 * as the Flink connector's. Serializable, so executors connect on their own.
 *
 * <ul>
 *   <li>{@code endpoint}: grpc://host:port, grpc+tls://host:port or host:port (TLS with the tls
 *       files) (default 127.0.0.1:8815)
 *   <li>{@code username}, {@code password}: basic-to-bearer handshake
 *   <li>{@code token}: a static bearer token
 *   <li>{@code tls.ca-file}, {@code tls.cert-file}, {@code tls.key-file}: PEM files
 * </ul>
 */
record FluxgateOptions(
    String endpoint,
    String username,
    String password,
    String token,
    String tlsCaFile,
    String tlsCertFile,
    String tlsKeyFile)
    implements Serializable {

  static final String ENDPOINT = "endpoint";
  static final String TABLE = "table";

  /** Reads the connection keys of a Spark options map (keys are case-insensitive in Spark). */
  static FluxgateOptions from(Map<String, String> options) {
    return new FluxgateOptions(
        options.getOrDefault(ENDPOINT, FluxgateClient.DEFAULT_URI),
        options.get("username"),
        options.get("password"),
        options.get("token"),
        options.get("tls.ca-file"),
        options.get("tls.cert-file"),
        options.get("tls.key-file"));
  }

  /** Connects, reading into allocator. */
  FluxgateClient connect(BufferAllocator allocator) {
    return FluxgateClient.connect(
        endpoint,
        ConnectOptions.ofSettings(username, password, token, tlsCaFile, tlsCertFile, tlsKeyFile)
            .withAllocator(allocator));
  }

  /** Runs fn on a client of {@link Clients}, for the driver's planning calls. */
  <T> T call(Function<FluxgateClient, T> fn) {
    try (Clients.Lease lease = Clients.lease(this)) {
      return fn.apply(lease.client());
    }
  }

  @Override
  public String toString() {
    return endpoint; // never the secrets
  }
}
