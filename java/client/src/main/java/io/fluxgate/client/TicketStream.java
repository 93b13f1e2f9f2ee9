package io.fluxgate.client;

import com.google.protobuf.ByteString;
import io.grpc.Context;
import java.util.Iterator;
import org.apache.arrow.flight.impl.Flight;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The record batches of one ticket (DoGet), each with the offsets of its app_metadata. The current
 * batch lives in {@link #root()} until the next call to {@link #next()}. An unbounded ticket ends
 * only when the stream is cancelled or closed.
 */
public final class TicketStream implements AutoCloseable {
  private final Context.CancellableContext context;
  private final Iterator<Flight.FlightData> messages;
  private final IpcDecoder decoder;
  private final String server;
  private BatchMeta meta;
  private boolean done;

  TicketStream(FluxgateClient client, byte[] ticket) {
    Flight.Ticket t = Flight.Ticket.newBuilder().setTicket(ByteString.copyFrom(ticket)).build();
    this.server = client.uri();
    // The call belongs to this context, so that cancel() ends it from any thread.
    this.context = Context.current().withCancellation();
    Context previous = context.attach();
    try {
      this.messages = client.blocking.doGet(t);
    } finally {
      context.detach(previous);
    }
    this.decoder = new IpcDecoder(client.allocator());
  }

  /**
   * Advances to the next batch. Batches with no rows may come: they only advance {@link
   * BatchMeta#next()}, and an unbounded stream sends one at least every 5 seconds while idle.
   */
  public boolean next() {
    if (done) {
      return false;
    }
    try {
      while (messages.hasNext()) {
        Flight.FlightData msg = messages.next();
        if (decoder.read(msg)) {
          meta =
              msg.getAppMetadata().isEmpty()
                  ? null
                  : Json.decode(
                      msg.getAppMetadata().toByteArray(), BatchMeta.class, "batch app_metadata");
          return true;
        }
      }
    } catch (RuntimeException e) {
      done = true;
      throw FluxgateException.from("read ticket", e, server);
    }
    done = true;
    return false;
  }

  /** The stream's schema, waiting for it if no batch was read yet; null if none came. */
  public Schema schema() {
    try {
      while (decoder.schema() == null && !done && messages.hasNext()) {
        if (decoder.read(messages.next())) {
          throw new IllegalStateException("a batch before the schema");
        }
      }
    } catch (RuntimeException e) {
      done = true;
      throw FluxgateException.from("read ticket", e, server);
    }
    return decoder.schema();
  }

  /** The current batch. */
  public VectorSchemaRoot root() {
    return decoder.root();
  }

  /** The current batch's app_metadata: its bucket and offsets. */
  public BatchMeta meta() {
    return meta;
  }

  /** Ends the call; safe from any thread. A blocked {@link #next()} then fails. */
  public void cancel() {
    context.cancel(null);
  }

  /** Ends the call and frees the current batch. */
  @Override
  public void close() {
    done = true;
    cancel();
    decoder.close();
  }
}
