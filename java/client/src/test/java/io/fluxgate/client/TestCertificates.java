package io.fluxgate.client;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/** Certificates for TLS tests, made by openssl: the servers' and the clients' of every module. */
public final class TestCertificates {
  private TestCertificates() {}

  /**
   * Writes into d a CA (ca.pem), a certificate for 127.0.0.1 and localhost (server.pem, server.key)
   * and a client certificate (client.pem, client.key), all signed by the CA; keys are PKCS#8 PEM.
   */
  public static void make(Path d) throws IOException, InterruptedException {
    openssl(
        d,
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=fluxgate test CA");
    Files.writeString(
        d.resolve("server.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
    Files.writeString(d.resolve("client.ext"), "extendedKeyUsage=clientAuth\n");
    for (String who : new String[] {"server", "client"}) {
      openssl(
          d,
          "req",
          "-newkey",
          "ec",
          "-pkeyopt",
          "ec_paramgen_curve:prime256v1",
          "-nodes",
          "-keyout",
          who + ".key",
          "-out",
          who + ".csr",
          "-subj",
          "/CN=" + who);
      openssl(
          d,
          "x509",
          "-req",
          "-in",
          who + ".csr",
          "-CA",
          "ca.pem",
          "-CAkey",
          "ca.key",
          "-CAcreateserial",
          "-out",
          who + ".pem",
          "-days",
          "2",
          "-extfile",
          who + ".ext");
    }
  }

  /**
   * Makes the certificates into d and starts a server on d that requires TLS with a client
   * certificate signed by the CA, and authenticates by users (the users file's JSON, written to
   * d/users.json).
   */
  public static FluxgateServer startMutualTlsServer(Path d, String users)
      throws IOException, InterruptedException {
    make(d);
    Path usersFile = d.resolve("users.json");
    Files.writeString(usersFile, users);
    return FluxgateServer.start(
        d,
        "--users",
        usersFile.toString(),
        "--tls-cert",
        d.resolve("server.pem").toString(),
        "--tls-key",
        d.resolve("server.key").toString(),
        "--tls-client-ca",
        d.resolve("ca.pem").toString());
  }

  /** A static API token's SHA-256 in hex, as the users file's token_sha256 names it. */
  public static String tokenSha256(String token) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("every JVM has SHA-256", e);
    }
  }

  private static void openssl(Path d, String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>(List.of("openssl"));
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).directory(d.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      throw new IllegalStateException("openssl " + String.join(" ", args) + " failed:\n" + out);
    }
  }
}
