package io.fluxgate.client;

import java.nio.file.Path;
import java.time.Duration;
import org.apache.arrow.memory.BufferAllocator;

/**
 * How {@link FluxgateClient#connect} connects: credentials, TLS files and the allocator of the
 * batches read. Immutable; each {@code with} returns a copy.
 *
 * @param allocator where read batches live; null for a new RootAllocator the client owns
 * @param username with password, authenticates by the basic-to-bearer handshake (PROTOCOL.md §8)
 * @param token a static API token, sent as the bearer token without a handshake
 * @param tlsCaFile PEM CA certificates to verify the server with, instead of the system's
 * @param tlsCertFile with tlsKeyFile (PKCS#8 PEM), a client certificate for mutual TLS
 * @param handshakeTimeout how long connect waits for the handshake
 */
public record ConnectOptions(
    BufferAllocator allocator,
    String username,
    String password,
    String token,
    Path tlsCaFile,
    Path tlsCertFile,
    Path tlsKeyFile,
    Duration handshakeTimeout) {

  /** The largest message either side sends, the server's default --max-message-bytes. */
  public static final int MAX_MESSAGE_BYTES = 64 << 20;

  public static ConnectOptions defaults() {
    return new ConnectOptions(null, null, null, null, null, null, null, Duration.ofSeconds(30));
  }

  /**
   * The connection settings the connectors take as string options ({@code username}/{@code
   * password} or {@code token}, {@code tls.ca-file}, {@code tls.cert-file}, {@code tls.key-file});
   * each may be null. With a username, the token is not used.
   */
  public static ConnectOptions ofSettings(
      String username,
      String password,
      String token,
      String tlsCaFile,
      String tlsCertFile,
      String tlsKeyFile) {
    return new ConnectOptions(
        null,
        username,
        password,
        username == null ? token : null,
        path(tlsCaFile),
        path(tlsCertFile),
        path(tlsKeyFile),
        defaults().handshakeTimeout());
  }

  /** Whether any TLS file is given: a bare host:port then speaks TLS, a grpc:// one is refused. */
  boolean hasTlsFiles() {
    return tlsCaFile != null || tlsCertFile != null || tlsKeyFile != null;
  }

  private static Path path(String file) {
    return file == null ? null : Path.of(file);
  }

  public ConnectOptions withAllocator(BufferAllocator allocator) {
    return new ConnectOptions(
        allocator, username, password, token, tlsCaFile, tlsCertFile, tlsKeyFile, handshakeTimeout);
  }

  public ConnectOptions withBasicAuth(String username, String password) {
    return new ConnectOptions(
        allocator, username, password, token, tlsCaFile, tlsCertFile, tlsKeyFile, handshakeTimeout);
  }

  public ConnectOptions withToken(String token) {
    return new ConnectOptions(
        allocator, username, password, token, tlsCaFile, tlsCertFile, tlsKeyFile, handshakeTimeout);
  }

  public ConnectOptions withTlsCa(Path caFile) {
    return new ConnectOptions(
        allocator, username, password, token, caFile, tlsCertFile, tlsKeyFile, handshakeTimeout);
  }

  public ConnectOptions withClientCert(Path certFile, Path keyFile) {
    return new ConnectOptions(
        allocator, username, password, token, tlsCaFile, certFile, keyFile, handshakeTimeout);
  }

  public ConnectOptions withHandshakeTimeout(Duration timeout) {
    return new ConnectOptions(
        allocator, username, password, token, tlsCaFile, tlsCertFile, tlsKeyFile, timeout);
  }
}
