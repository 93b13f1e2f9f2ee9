package io.fluxgate.client;

import io.grpc.netty.NettyChannelBuilder;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The threads of one client: its Netty event loop and the executor of its gRPC callbacks. gRPC's
 * defaults are process-wide pools that outlive the last channel by a second or more; a connector
 * loaded in a job's classloader (Flink's user code) must not leave threads behind that load classes
 * after the job closed that classloader. So each client owns its threads and {@link #close} stops
 * them and waits.
 */
final class ClientThreads implements AutoCloseable {
  private static final long STOP_SECONDS = 10;

  // One channel is one connection, served by one event loop.
  private final EventLoopGroup eventLoop =
      new NioEventLoopGroup(1, new DefaultThreadFactory("fluxgate-client-netty", true));
  private final ExecutorService callbacks =
      Executors.newCachedThreadPool(new DefaultThreadFactory("fluxgate-client-grpc", true));

  /** Makes the channel run on these threads rather than gRPC's shared ones. */
  NettyChannelBuilder use(NettyChannelBuilder builder) {
    return builder
        .eventLoopGroup(eventLoop)
        .channelType(NioSocketChannel.class)
        .executor(callbacks)
        .offloadExecutor(callbacks);
  }

  /** Stops the threads once their work is done, waiting for them; call after the channel's end. */
  @Override
  public void close() {
    callbacks.shutdown();
    io.netty.util.concurrent.Future<?> loopDone =
        eventLoop.shutdownGracefully(0, STOP_SECONDS, TimeUnit.SECONDS);
    try {
      callbacks.awaitTermination(STOP_SECONDS, TimeUnit.SECONDS);
      loopDone.await(STOP_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // a cancelled task: its threads stop without us
    }
  }
}
