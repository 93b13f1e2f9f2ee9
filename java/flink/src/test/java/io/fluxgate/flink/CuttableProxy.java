package io.fluxgate.flink;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A loopback TCP proxy to a server whose open connections a test can cut, as a network would. */
public final class CuttableProxy implements AutoCloseable {
  private final ServerSocket listener;
  private final int target;
  private final List<Socket> open = new CopyOnWriteArrayList<>();

  public CuttableProxy(int target) throws IOException {
    this.target = target;
    this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread accept = new Thread(this::accept, "proxy-accept");
    accept.setDaemon(true);
    accept.start();
  }

  public String uri() {
    return "grpc://127.0.0.1:" + listener.getLocalPort();
  }

  /** Closes every connection open now; new ones are proxied as before. */
  public void cut() throws IOException {
    for (Socket s : open) {
      s.close();
    }
    open.clear();
  }

  private void accept() {
    while (!listener.isClosed()) {
      try {
        Socket client = listener.accept();
        Socket server = new Socket(InetAddress.getLoopbackAddress(), target);
        open.add(client);
        open.add(server);
        pump(client, server);
        pump(server, client);
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private static void pump(Socket from, Socket to) {
    Thread t =
        new Thread(
            () -> {
              try (InputStream in = from.getInputStream();
                  OutputStream out = to.getOutputStream()) {
                in.transferTo(out);
              } catch (IOException e) {
                // a side closed: the copy in the other direction ends too
              } finally {
                try {
                  from.close();
                  to.close();
                } catch (IOException ignored) {
                  // already closed
                }
              }
            },
            "proxy-pump");
    t.setDaemon(true);
    t.start();
  }

  @Override
  public void close() throws IOException {
    listener.close();
    cut();
  }
}
