package io.fluxgate.client;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The real fluxgate binary ($FLUXGATE_BIN), serving a fresh data directory on a free loopback port
 * for the length of a test class.
 */
public final class FluxgateServer implements AutoCloseable {
  private static final long START_TIMEOUT_MS = 30_000;

  private final Process process;
  private final Path log;
  public final int port;
  private final Path dir;
  private final String[] extraArgs;

  private FluxgateServer(Process process, Path log, int port, Path dir, String[] extraArgs) {
    this.process = process;
    this.log = log;
    this.port = port;
    this.dir = dir;
    this.extraArgs = extraArgs;
  }

  /** The binary the tests run; fails the test with how to build it when it is not set. */
  public static Path binary() {
    String bin = System.getenv("FLUXGATE_BIN");
    if (bin == null || bin.isEmpty()) {
      throw new IllegalStateException(
          "FLUXGATE_BIN is not set: build the server first, e.g. "
              + "`go build -o /tmp/fluxgate ./cmd/fluxgate` at the repository root, "
              + "then run with FLUXGATE_BIN=/tmp/fluxgate");
    }
    Path path = Path.of(bin);
    if (!Files.isExecutable(path)) {
      throw new IllegalStateException("FLUXGATE_BIN=" + bin + " is not an executable file");
    }
    return path;
  }

  /**
   * Starts `fluxgate serve` on dir with these extra flags and waits until it accepts connections.
   */
  public static FluxgateServer start(Path dir, String... extraArgs)
      throws IOException, InterruptedException {
    return start(dir, freePort(), extraArgs);
  }

  /**
   * Stops the server and starts it again on the same data and port (clients reconnect), as a server
   * restart does; returns the new one.
   */
  public FluxgateServer restarted() throws IOException, InterruptedException {
    close();
    return start(dir, port, extraArgs);
  }

  private static FluxgateServer start(Path dir, int port, String... extraArgs)
      throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(binary().toString());
    cmd.addAll(
        List.of(
            "serve",
            "--data",
            dir.resolve("data").toString(),
            "--listen",
            "127.0.0.1:" + port,
            "--http",
            "",
            "--log-level",
            "warn"));
    cmd.addAll(List.of(extraArgs));
    Path log = dir.resolve("server.log");
    Process p =
        new ProcessBuilder(cmd)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .start();
    FluxgateServer server = new FluxgateServer(p, log, port, dir, extraArgs);
    long deadline = System.currentTimeMillis() + START_TIMEOUT_MS;
    while (!server.accepts()) {
      if (!p.isAlive() || System.currentTimeMillis() > deadline) {
        server.close();
        throw new IllegalStateException(
            "fluxgate did not start on port " + port + ":\n" + server.log());
      }
      p.waitFor(50, TimeUnit.MILLISECONDS); // a bounded wait on the process itself, then poll again
    }
    return server;
  }

  /** Runs the binary with args and stdin, returning its stdout (e.g. `auth hash-password`). */
  public static String run(String stdin, String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(binary().toString());
    cmd.addAll(List.of(args));
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    p.getOutputStream().write(stdin.getBytes(StandardCharsets.UTF_8));
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    if (p.waitFor() != 0) {
      throw new IllegalStateException("fluxgate " + String.join(" ", args) + " failed");
    }
    return out;
  }

  public String uri() {
    return "grpc://127.0.0.1:" + port;
  }

  private boolean accepts() {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 200);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  public String log() {
    try {
      return Files.readString(log);
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(10, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
  }
}
