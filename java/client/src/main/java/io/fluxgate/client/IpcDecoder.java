package io.fluxgate.client;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.flight.impl.Flight.FlightData;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorLoader;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Reads the FlightData messages of one stream: its schema, then record batches, compressed (LZ4
 * frame or ZSTD) or not, loaded into a root that the decoder owns and reuses.
 */
final class IpcDecoder implements AutoCloseable {
  private final BufferAllocator allocator;
  private Schema schema;
  private boolean restarted; // the stream was opened again: its schema comes again
  private VectorSchemaRoot root;
  private VectorLoader loader;

  IpcDecoder(BufferAllocator allocator) {
    this.allocator = allocator;
  }

  /**
   * Reads one message. Returns true when it was a record batch, now in {@link #root()}; false for
   * the schema and for messages without an IPC header.
   */
  boolean read(FlightData msg) {
    if (msg.getDataHeader().isEmpty()) {
      return false;
    }
    ByteBuffer header = msg.getDataHeader().asReadOnlyByteBuffer();
    Message message = Message.getRootAsMessage(header);
    switch (message.headerType()) {
      case MessageHeader.Schema -> {
        Schema read = MessageSerializer.deserializeSchema(message);
        if (schema != null) {
          if (restarted && read.equals(schema)) {
            restarted = false;
            return false;
          }
          throw new FluxgateException(
              io.grpc.Status.Code.INTERNAL, "a second schema in one stream");
        }
        schema = read;
        newRoot();
        return false;
      }
      case MessageHeader.RecordBatch -> {
        if (schema == null) {
          throw new FluxgateException(
              io.grpc.Status.Code.INTERNAL, "a record batch before the schema");
        }
        load((RecordBatch) message.header(new RecordBatch()), msg);
        return true;
      }
      default ->
          throw new FluxgateException(
              io.grpc.Status.Code.UNIMPLEMENTED,
              "IPC message type " + MessageHeader.name(message.headerType()) + " is not supported");
    }
  }

  private void load(RecordBatch batchHeader, FlightData msg) {
    ByteBuffer src = msg.getDataBody().asReadOnlyByteBuffer();
    ArrowBuf body = allocator.buffer(src.remaining());
    ArrowRecordBatch batch;
    try {
      body.setBytes(0, src);
      // Takes over the body: the batch holds slices of it, the body's own reference is released.
      batch = MessageSerializer.deserializeRecordBatch(batchHeader, body);
    } catch (IOException | RuntimeException e) {
      body.close();
      throw new FluxgateException(
          io.grpc.Status.Code.INTERNAL, "bad record batch: " + e.getMessage(), e);
    }
    try (batch) {
      loader.load(batch);
    }
  }

  private void newRoot() {
    root = VectorSchemaRoot.create(schema, allocator);
    loader = new VectorLoader(root, CommonsCompressionFactory.INSTANCE);
  }

  /** Takes the stream opened again (a resumed read), which sends the same schema again first. */
  void restart() {
    restarted = true;
  }

  /** The stream's schema, null before it arrived. */
  Schema schema() {
    return schema;
  }

  /** The current batch; valid until the next {@link #read}. */
  VectorSchemaRoot root() {
    return root;
  }

  /** Hands the current batch to the caller, who closes it; the next batch gets a new root. */
  VectorSchemaRoot takeRoot() {
    VectorSchemaRoot taken = root;
    newRoot();
    return taken;
  }

  @Override
  public void close() {
    if (root != null) {
      root.close();
      root = null;
    }
  }
}
