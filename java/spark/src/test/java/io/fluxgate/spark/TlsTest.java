package io.fluxgate.spark;

import static io.fluxgate.client.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.Column;
import io.fluxgate.client.FluxgateException;
import io.fluxgate.client.FluxgateServer;
import io.fluxgate.client.TableSpec;
import io.fluxgate.client.TestCertificates;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The connector's TLS options against a second server that requires mutual TLS and a token, its
 * certificates made by openssl for the test.
 */
class TlsTest extends SparkServerTest {
  private static final String TOKEN = "tls-token";
  private static final String TABLE = "fluss.tls";

  @TempDir static Path tlsDir;
  static FluxgateServer tlsServer;

  @BeforeAll
  static void startTlsServer() throws Exception {
    tlsServer =
        TestCertificates.startMutualTlsServer(
            tlsDir,
            "{\"users\": [], \"tokens\": [{\"name\": \"svc\", \"token_sha256\": \""
                + TestCertificates.tokenSha256(TOKEN)
                + "\", \"admin\": true}]}");
    FluxgateOptions.from(tlsOptions())
        .call(
            admin -> {
              admin.createDatabase("fluss", true);
              admin.createTable(TableSpec.of(TABLE, Column.of("id", "BIGINT")), false);
              return null;
            });
    spark.conf().set("spark.sql.catalog.fgtls", FluxgateCatalog.class.getName());
    tlsOptions().forEach((k, v) -> spark.conf().set("spark.sql.catalog.fgtls." + k, v));
  }

  @AfterAll
  static void stopTlsServer() throws Exception {
    if (tlsServer != null) {
      tlsServer.close();
    }
  }

  private static String endpoint() {
    return "grpc+tls://127.0.0.1:" + tlsServer.port;
  }

  /** The connector's options for the TLS server: its CA, the client certificate and the token. */
  private static Map<String, String> tlsOptions() {
    return Map.of(
        "endpoint", endpoint(),
        "token", TOKEN,
        "tls.ca-file", tlsDir.resolve("ca.pem").toString(),
        "tls.cert-file", tlsDir.resolve("client.pem").toString(),
        "tls.key-file", tlsDir.resolve("client.key").toString());
  }

  @Test
  void writeAndReadOverMutualTls() {
    spark
        .range(1, 4)
        .toDF("id")
        .write()
        .format("fluxgate")
        .options(tlsOptions())
        .option("table", TABLE)
        .mode("append")
        .save();
    assertEquals(
        List.of(row(1L), row(2L), row(3L)),
        rows(
            spark
                .read()
                .format("fluxgate")
                .options(tlsOptions())
                .option("table", TABLE)
                .load()
                .orderBy("id")));
    assertEquals(3L, spark.sql("SELECT count(*) FROM fgtls." + TABLE).first().getLong(0));
  }

  @Test
  void withoutTheCaTheServerIsNotTrusted() {
    Exception e =
        assertThrows(
            Exception.class,
            () ->
                spark
                    .read()
                    .format("fluxgate")
                    .option("endpoint", endpoint())
                    .option("token", TOKEN)
                    .option("tls.cert-file", tlsDir.resolve("client.pem").toString())
                    .option("tls.key-file", tlsDir.resolve("client.key").toString())
                    .option("table", TABLE)
                    .load());
    boolean unavailable = false;
    for (Throwable c = e; c != null; c = c.getCause()) {
      unavailable |= c instanceof FluxgateException.Unavailable;
    }
    assertTrue(unavailable, messages(e));
  }
}
