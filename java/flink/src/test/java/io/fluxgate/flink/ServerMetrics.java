package io.fluxgate.flink;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Arrays;

/** The server's Prometheus counters (docs/metrics.md), read from its --http listener. */
public final class ServerMetrics {
  private final String address;

  private ServerMetrics(String address) {
    this.address = address;
  }

  /** A free loopback address for the server's --http flag (a static field's initializer). */
  static ServerMetrics onFreePort() {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return new ServerMetrics("127.0.0.1:" + s.getLocalPort());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The server's flags: others, then those that make it listen there. */
  String[] flags(String... others) {
    String[] all = Arrays.copyOf(others, others.length + 2);
    all[others.length] = "--http";
    all[others.length + 1] = address;
    return all;
  }

  /** The sum of a counter's samples whose labels name table (database.table). */
  double sum(String name, String table) throws IOException, InterruptedException {
    HttpResponse<String> r =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create("http://" + address + "/metrics")).build(),
                HttpResponse.BodyHandlers.ofString());
    double sum = 0;
    String label = "table=\"" + table + "\"";
    for (String line : r.body().split("\\n")) {
      if (line.startsWith(name + "{") && line.contains(label)) {
        sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return sum;
  }
}
