package io.fluxgate.client;

import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import org.apache.arrow.flight.impl.Flight;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Writes record batches to one table through one DoPut stream (PROTOCOL.md §5).
 *
 * <p>Each batch is one atomic unit on the server: once its {@link PutResult} is back, all its rows
 * are applied and durable; if the stream fails, none of an unacknowledged batch is. {@link #write}
 * is the simple, synchronous form. For throughput, {@link #send} many batches and collect their
 * results with {@link #recv} or {@link #flush}: the server works on batches while later ones are in
 * transit. One thread uses a writer.
 */
public final class TableWriter implements AutoCloseable {
  static final int DEFAULT_MAX_IN_FLIGHT = 16;

  /** The end of the server's results. */
  private static final Object END = new Object();

  private final String doing;
  private final String server;
  private final Flight.FlightDescriptor descriptor;
  private final IpcEncoder encoder;
  private final Semaphore inFlight;
  private final int maxInFlight;

  /** PutResults, then END or the Throwable that ended the call; filled by gRPC's thread. */
  private final BlockingQueue<Object> results = new LinkedBlockingQueue<>();

  private final ClientCallStreamObserver<Flight.FlightData> requests;

  /** The server ended the call: no result will free a place in flight any more. */
  private volatile boolean ended;

  private Schema schema;
  private int pending;
  private FluxgateException failure;
  private boolean failureSeen;
  private boolean closed;

  TableWriter(
      FluxgateClient client,
      String table,
      Flight.FlightDescriptor descriptor,
      Compression compression,
      int zstdLevel,
      int maxInFlight) {
    if (maxInFlight < 1) {
      throw new IllegalArgumentException("maxInFlight " + maxInFlight + ": want at least 1");
    }
    this.doing = "write " + table;
    this.server = client.uri();
    this.descriptor = descriptor;
    this.encoder = new IpcEncoder(compression, zstdLevel);
    this.maxInFlight = maxInFlight;
    this.inFlight = new Semaphore(maxInFlight);
    Receiver receiver = new Receiver();
    client.async.doPut(receiver);
    this.requests = receiver.requests;
  }

  /** Sends the root's rows and waits for their result. No result of {@link #send} may be due. */
  public PutResult write(VectorSchemaRoot root) {
    if (pending > 0) {
      throw new IllegalStateException(
          doing + ": write with " + pending + " results due; recv or flush first");
    }
    send(root);
    return recv();
  }

  /**
   * Sends the root's rows as one batch without waiting for its result, blocking while maxInFlight
   * batches await theirs. The batch is encoded before send returns, so the caller may refill the
   * root at once.
   */
  public void send(VectorSchemaRoot root) {
    if (closed) {
      throw new IllegalStateException(doing + ": send after close");
    }
    throwFailure();
    if (schema != null && !schema.equals(root.getSchema())) {
      throw new IllegalArgumentException(
          doing + ": batch schema " + root.getSchema() + " differs from the stream's " + schema);
    }
    Flight.FlightData batch = encoder.batch(root);
    try {
      inFlight.acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw cancelled(e);
    }
    if (ended) {
      // The server refused an earlier batch: its error, not a wait for places that never free.
      inFlight.release();
      while (failure == null) {
        Object next = take();
        if (next instanceof PutResult) {
          pending--;
        } else {
          fail(next);
        }
      }
      throwFailureAlways();
    }
    if (schema == null) {
      schema = root.getSchema();
      requests.onNext(IpcEncoder.schema(schema, descriptor));
    }
    requests.onNext(batch);
    pending++;
  }

  /**
   * The result of the oldest batch sent whose result was not yet returned, waiting for it. A failed
   * stream fails this and every later call with the server's error.
   */
  public PutResult recv() {
    throwFailure();
    if (pending == 0) {
      throw new IllegalStateException(doing + ": no batch awaits its result");
    }
    Object next = take();
    if (next instanceof PutResult r) {
      pending--;
      return r;
    }
    fail(next);
    return throwFailureAlways();
  }

  /** Waits for the results of every batch sent and not yet returned, in send order. */
  public List<PutResult> flush() {
    List<PutResult> out = new ArrayList<>(pending);
    while (pending > 0) {
      out.add(recv());
    }
    return out;
  }

  /** Number of batches sent whose result was not yet returned. */
  public int pending() {
    return pending;
  }

  /**
   * Ends the stream and waits for the results of every batch sent (results not returned by {@link
   * #recv} are dropped: {@link #flush} first to have them). Throws the stream's error unless a call
   * before already threw it.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    if (schema == null) {
      // Nothing written: end the call rather than send a stream without a descriptor.
      requests.cancel("nothing written", null);
      return;
    }
    if (failure == null) {
      requests.onCompleted();
      while (failure == null) {
        Object next = take();
        if (next instanceof PutResult) {
          pending--;
        } else if (next == END && pending == 0) {
          return;
        } else {
          fail(next);
        }
      }
    }
    requests.cancel("closed after a failure", null);
    if (!failureSeen) {
      failureSeen = true;
      throw failure;
    }
  }

  /**
   * Ends the call without waiting for the results of the batches in flight, which may or may not be
   * applied: for a caller that failed or is being cancelled. Throws nothing.
   */
  public void cancel() {
    if (!closed) {
      closed = true;
      requests.cancel("cancelled by the writer", null);
    }
  }

  private Object take() {
    try {
      return results.take();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw cancelled(e);
    }
  }

  /** Makes how the stream ended the writer's sticky failure. */
  private void fail(Object end) {
    failure =
        end == END
            ? new FluxgateException(
                Status.Code.INTERNAL,
                doing + ": the server ended the stream with " + pending + " results missing")
            : FluxgateException.from(doing, (Throwable) end, server);
  }

  private void throwFailure() {
    if (failure != null) {
      throwFailureAlways();
    }
  }

  /** Throws the failure, noting that the caller has seen it. */
  private PutResult throwFailureAlways() {
    failureSeen = true;
    throw failure;
  }

  private FluxgateException cancelled(InterruptedException e) {
    requests.cancel("interrupted", e);
    failure = new FluxgateException(Status.Code.CANCELLED, doing + ": interrupted", e);
    failureSeen = true;
    return failure;
  }

  /** Collects the server's results on gRPC's thread. */
  private final class Receiver
      implements ClientResponseObserver<Flight.FlightData, Flight.PutResult> {
    ClientCallStreamObserver<Flight.FlightData> requests;

    @Override
    public void beforeStart(ClientCallStreamObserver<Flight.FlightData> requests) {
      this.requests = requests;
    }

    @Override
    public void onNext(Flight.PutResult result) {
      byte[] meta = result.getAppMetadata().toByteArray();
      Object parsed;
      try {
        parsed = Json.decode(meta, PutResult.class, "PutResult app_metadata");
      } catch (FluxgateException e) {
        parsed = e;
      }
      results.add(parsed);
      inFlight.release();
    }

    @Override
    public void onError(Throwable t) {
      results.add(t);
      ended = true;
      inFlight.release(maxInFlight); // wake a sender blocked on the limit
    }

    @Override
    public void onCompleted() {
      results.add(END);
      ended = true;
      inFlight.release(maxInFlight);
    }
  }
}
