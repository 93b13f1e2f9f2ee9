package io.fluxgate.flink;

import io.fluxgate.client.ConnectOptions;
import io.fluxgate.client.FluxgateClient;
import java.io.Serializable;
import org.apache.flink.configuration.ReadableConfig;

/**
 * Where and how to connect: what the catalog, the source readers and the sink writers each connect
 * with, shipped to the task managers with the job.
 */
public record Connection(
    String endpoint,
    String username,
    String password,
    String token,
    String tlsCaFile,
    String tlsCertFile,
    String tlsKeyFile)
    implements Serializable {

  static Connection from(ReadableConfig config) {
    return new Connection(
        config.get(FluxgateOptions.ENDPOINT),
        config.get(FluxgateOptions.USERNAME),
        config.get(FluxgateOptions.PASSWORD),
        config.get(FluxgateOptions.TOKEN),
        config.get(FluxgateOptions.TLS_CA_FILE),
        config.get(FluxgateOptions.TLS_CERT_FILE),
        config.get(FluxgateOptions.TLS_KEY_FILE));
  }

  /** Connects; with a username the handshake runs now, so bad credentials fail here. */
  public FluxgateClient connect() {
    return FluxgateClient.connect(
        endpoint,
        ConnectOptions.ofSettings(
            username, password, token, tlsCaFile, tlsCertFile, tlsKeyFile));
  }

  @Override
  public String toString() { // never the password or the token
    return "Connection[" + endpoint + (username == null ? "" : " as " + username) + "]";
  }
}
