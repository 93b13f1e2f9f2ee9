package io.fluxgate.client;

import io.grpc.Status;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flight.impl.Flight;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.arrow.vector.util.VectorSchemaRootAppender;

/**
 * Looks keys up through one DoExchange stream (PROTOCOL.md §6). Each key batch sent gets one answer
 * (the server sends one over 4 MiB in several messages, which this joins). The key batch's columns
 * are, by name, the primary key (point lookups) or the bucket key (prefix lookups). {@link #lookup}
 * is the synchronous form; {@link #send} and {@link #recv} pipeline many key batches. Errors about
 * the request itself (an unknown table, a prefix lookup without a prefix index) come with the first
 * answer. One thread uses a Lookuper.
 */
public final class Lookuper implements AutoCloseable {
  private static final int MAX_IN_FLIGHT = 16;
  private static final Object END = new Object();

  private final String doing;
  private final String server;
  private final Flight.FlightDescriptor descriptor;
  private final IpcEncoder encoder =
      new IpcEncoder(Compression.NONE, IpcEncoder.DEFAULT_ZSTD_LEVEL);
  private final IpcDecoder decoder;
  private final Semaphore inFlight = new Semaphore(MAX_IN_FLIGHT);

  /** The server's messages, then END or the Throwable that ended the call. */
  private final BlockingQueue<Object> messages = new LinkedBlockingQueue<>();

  private final ClientCallStreamObserver<Flight.FlightData> requests;
  private Schema schema;
  private int pending;

  /** The messages received so far of an answer that has more. */
  private VectorSchemaRoot partial;

  private FluxgateException failure;
  private boolean closed;

  Lookuper(FluxgateClient client, String table, Flight.FlightDescriptor descriptor) {
    this.doing = "lookup " + table;
    this.server = client.uri();
    this.descriptor = descriptor;
    this.decoder = new IpcDecoder(client.allocator());
    Receiver receiver = new Receiver();
    client.async.doExchange(receiver);
    this.requests = receiver.requests;
  }

  /**
   * Looks up the keys of one batch and waits for the answer. No answer of {@link #send} may be due.
   */
  public LookupResult lookup(VectorSchemaRoot keys) {
    if (pending > 0) {
      throw new IllegalStateException(
          doing + ": lookup with " + pending + " answers due; recv first");
    }
    send(keys);
    return recv();
  }

  /** Sends a key batch without waiting for its answer; the caller may refill the root at once. */
  public void send(VectorSchemaRoot keys) {
    if (closed) {
      throw new IllegalStateException(doing + ": send after close");
    }
    if (failure != null) {
      throw failure;
    }
    if (schema != null && !schema.equals(keys.getSchema())) {
      throw new IllegalArgumentException(
          doing
              + ": key batch schema "
              + keys.getSchema()
              + " differs from the stream's "
              + schema);
    }
    Flight.FlightData batch = encoder.batch(keys);
    try {
      inFlight.acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      requests.cancel("interrupted", e);
      failure = new FluxgateException(Status.Code.CANCELLED, doing + ": interrupted", e);
      throw failure;
    }
    if (schema == null) {
      schema = keys.getSchema();
      requests.onNext(IpcEncoder.schema(schema, descriptor));
    }
    requests.onNext(batch);
    pending++;
  }

  /** The answer to the oldest key batch not yet answered, waiting for it. */
  public LookupResult recv() {
    if (failure != null) {
      throw failure;
    }
    if (pending == 0) {
      throw new IllegalStateException(doing + ": no key batch awaits its answer");
    }
    while (true) {
      Object next;
      try {
        next = messages.take();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        requests.cancel("interrupted", e);
        failure = new FluxgateException(Status.Code.CANCELLED, doing + ": interrupted", e);
        throw failure;
      }
      try {
        if (next instanceof Flight.FlightData msg) {
          if (decoder.read(msg)) {
            LookupMeta meta = meta(msg);
            VectorSchemaRoot part = decoder.takeRoot();
            if (partial == null) {
              partial = part;
            } else {
              try (part) {
                VectorSchemaRootAppender.append(partial, part);
              }
            }
            if (meta.more()) {
              continue;
            }
            VectorSchemaRoot rows = partial;
            partial = null;
            if (rows.getRowCount() != meta.rows()) {
              rows.close();
              throw new FluxgateException(
                  Status.Code.INTERNAL,
                  doing
                      + ": the answer's messages hold "
                      + rows.getRowCount()
                      + " rows; its app_metadata says "
                      + meta.rows());
            }
            pending--;
            return new LookupResult(rows, meta);
          }
          continue;
        }
      } catch (FluxgateException e) {
        failure = e;
        requests.cancel("bad answer", e);
        throw failure;
      }
      failure =
          next == END
              ? new FluxgateException(
                  Status.Code.INTERNAL,
                  doing + ": the server ended the stream with " + pending + " answers missing")
              : FluxgateException.from(doing, (Throwable) next, server);
      throw failure;
    }
  }

  private static LookupMeta meta(Flight.FlightData msg) {
    return Json.decode(msg.getAppMetadata().toByteArray(), LookupMeta.class, "lookup app_metadata");
  }

  /** Ends the stream; answers not taken are dropped. */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    requests.cancel("closed", null);
    if (partial != null) {
      partial.close();
      partial = null;
    }
    decoder.close();
  }

  private final class Receiver
      implements ClientResponseObserver<Flight.FlightData, Flight.FlightData> {
    ClientCallStreamObserver<Flight.FlightData> requests;

    @Override
    public void beforeStart(ClientCallStreamObserver<Flight.FlightData> requests) {
      this.requests = requests;
    }

    @Override
    public void onNext(Flight.FlightData msg) {
      messages.add(msg);
      if (!msg.getDataHeader().isEmpty()
          && Message.getRootAsMessage(msg.getDataHeader().asReadOnlyByteBuffer()).headerType()
              == MessageHeader.RecordBatch
          && lastOfAnswer(msg)) {
        inFlight.release();
      }
    }

    /** Whether a batch ends its answer; a batch whose metadata does not parse fails recv. */
    private boolean lastOfAnswer(Flight.FlightData msg) {
      try {
        return !meta(msg).more();
      } catch (FluxgateException e) {
        return true;
      }
    }

    @Override
    public void onError(Throwable t) {
      messages.add(t);
      inFlight.release(MAX_IN_FLIGHT);
    }

    @Override
    public void onCompleted() {
      messages.add(END);
      inFlight.release(MAX_IN_FLIGHT);
    }
  }
}
