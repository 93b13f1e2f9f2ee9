package io.fluxgate.flink;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** The server's Prometheus counters (docs/metrics.md), read from its --http listener. */
final class ServerMetrics {
  private final String address;

  private ServerMetrics(String address) {
    this.address = address;
  }

  /** A free loopback address for the server's --http flag. */
  static ServerMetrics onFreePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return new ServerMetrics("127.0.0.1:" + s.getLocalPort());
    }
  }

  /** The flags that make the server listen there. */
  String[] flags() {
    return new String[] {"--http", address};
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
