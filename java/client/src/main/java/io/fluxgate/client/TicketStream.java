package io.fluxgate.client;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.google.protobuf.ByteString;
import io.grpc.Context;
import io.grpc.StatusRuntimeException;
import java.util.Iterator;
import org.apache.arrow.flight.impl.Flight;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * The record batches of one ticket (DoGet), each with the offsets of its app_metadata. The current
 * batch lives in {@link #root()} until the next call to {@link #next()}. An unbounded ticket ends
 * only when the stream is cancelled or closed.
 *
 * <p>When the server ends the stream because its reader took nothing for the server's idle timeout
 * (the caller stopped calling {@link #next()}, e.g. under backpressure), the stream opens the read
 * again after the last batch it returned, so that no batch comes twice or is missed; where it
 * cannot (inside a snapshot) {@link #next()} throws, saying so.
 */
public final class TicketStream implements AutoCloseable {
  private final FluxgateClient client;
  private final Context.CancellableContext context;
  private final IpcDecoder decoder;
  private final String server;
  private Iterator<Flight.FlightData> messages;
  private BatchMeta meta;
  private boolean done;
  // The ticket as resumed, and what next() returned since it was redeemed.
  private byte[] ticket;
  private BatchMeta last;
  private long rows;

  TicketStream(FluxgateClient client, byte[] ticket) {
    this.client = client;
    this.server = client.uri();
    // The calls belong to this context, so that cancel() ends them from any thread.
    this.context = Context.current().withCancellation();
    call(ticket);
    this.decoder = new IpcDecoder(client.allocator());
  }

  /** Redeems ticket, for the batches from the next next() on. */
  private void call(byte[] ticket) {
    Flight.Ticket t = Flight.Ticket.newBuilder().setTicket(ByteString.copyFrom(ticket)).build();
    Context previous = context.attach();
    try {
      this.messages = client.blocking.doGet(t);
    } finally {
      context.detach(previous);
    }
    this.ticket = ticket;
    this.last = null;
    this.rows = 0;
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
      while (true) {
        try {
          while (messages.hasNext()) {
            Flight.FlightData msg = messages.next();
            if (decoder.read(msg)) {
              meta =
                  msg.getAppMetadata().isEmpty()
                      ? null
                      : Json.decode(
                          msg.getAppMetadata().toByteArray(),
                          BatchMeta.class,
                          "batch app_metadata");
              last = meta != null ? meta : last;
              rows += decoder.root().getRowCount();
              return true;
            }
          }
          done = true;
          return false;
        } catch (StatusRuntimeException e) {
          if (!StreamResume.endedIdle(e)) {
            throw e;
          }
          if (!resume(e)) {
            done = true;
            return false;
          }
        }
      }
    } catch (RuntimeException e) {
      done = true;
      throw FluxgateException.from("read ticket", e, server);
    }
  }

  /**
   * Opens the read again after the batches next() returned, the server having ended the stream for
   * its idle timeout; false when nothing is left of it.
   */
  private boolean resume(StatusRuntimeException ended) {
    ObjectNode rest;
    try {
      rest = StreamResume.ticket((ObjectNode) Json.MAPPER.readTree(ticket), last, rows);
    } catch (StreamResume.CannotResume | java.io.IOException | ClassCastException e) {
      throw new FluxgateException.ResourceExhausted(
          "read ticket: " + ended.getStatus().getDescription() + "; not resumed: " + e.getMessage(),
          ended);
    }
    if (rest == null) {
      return false;
    }
    decoder.restart();
    call(Json.encode(rest));
    return true;
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
