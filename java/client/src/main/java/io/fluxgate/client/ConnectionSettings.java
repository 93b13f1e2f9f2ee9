package io.fluxgate.client;

import java.io.Serializable;
import java.util.function.Function;
import org.apache.arrow.memory.BufferAllocator;

/**
 * Where a server is and how to log in, as the connectors are configured: the same string settings
 * in Flink's and Spark's options, read once here. Serializable, so a job ships it to the tasks,
 * which connect on their own; {@link #toString} shows no secret.
 *
 * @param endpoint grpc://host:port, grpc+tls://host:port or host:port
 * @param username with password, the basic-to-bearer handshake (PROTOCOL.md §8)
 * @param token a static bearer token, not used with a username
 * @param tlsCaFile PEM CA certificates to verify the server with
 * @param tlsCertFile with tlsKeyFile (PKCS#8 PEM), a client certificate for mutual TLS
 */
public record ConnectionSettings(
    String endpoint,
    String username,
    String password,
    String token,
    String tlsCaFile,
    String tlsCertFile,
    String tlsKeyFile)
    implements Serializable {

  public static final String ENDPOINT = "endpoint";
  public static final String USERNAME = "username";
  public static final String PASSWORD = "password";
  public static final String TOKEN = "token";
  public static final String TLS_CA_FILE = "tls.ca-file";
  public static final String TLS_CERT_FILE = "tls.cert-file";
  public static final String TLS_KEY_FILE = "tls.key-file";

  /** Only the endpoint. */
  public static ConnectionSettings of(String endpoint) {
    return new ConnectionSettings(endpoint, null, null, null, null, null, null);
  }

  /**
   * Reads the settings by their keys; setting gives null for one not set, and an unset endpoint is
   * defaultEndpoint.
   */
  public static ConnectionSettings from(Function<String, String> setting, String defaultEndpoint) {
    String endpoint = setting.apply(ENDPOINT);
    return new ConnectionSettings(
        endpoint == null ? defaultEndpoint : endpoint,
        setting.apply(USERNAME),
        setting.apply(PASSWORD),
        setting.apply(TOKEN),
        setting.apply(TLS_CA_FILE),
        setting.apply(TLS_CERT_FILE),
        setting.apply(TLS_KEY_FILE));
  }

  /** How to connect: these credentials and TLS files, with the default timeouts. */
  public ConnectOptions options() {
    return ConnectOptions.ofSettings(username, password, token, tlsCaFile, tlsCertFile, tlsKeyFile);
  }

  /** Connects; with a username the handshake runs now, so bad credentials fail here. */
  public FluxgateClient connect() {
    return FluxgateClient.connect(endpoint, options());
  }

  /** Connects, reading into allocator. */
  public FluxgateClient connect(BufferAllocator allocator) {
    return FluxgateClient.connect(endpoint, options().withAllocator(allocator));
  }

  @Override
  public String toString() { // never the password or the token
    return "Connection[" + endpoint + (username == null ? "" : " as " + username) + "]";
  }
}
