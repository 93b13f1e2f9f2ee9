package io.fluxgate.client;

import com.google.protobuf.ByteString;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.flight.impl.Flight.FlightData;
import org.apache.arrow.flight.impl.Flight.FlightDescriptor;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.compression.CompressionCodec;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.ipc.message.ArrowBuffer;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Turns Arrow schemas and batches into FlightData messages. Arrow Java's Flight client cannot
 * compress what it sends (nor decompress what it reads), so the client speaks FlightData itself:
 * the IPC header and body of each message, with the body's buffers compressed when asked.
 */
final class IpcEncoder {
  private final CompressionCodec codec;

  IpcEncoder(Compression compression) {
    this.codec =
        switch (compression == null ? Compression.NONE : compression) {
          case NONE -> NoCompressionCodec.INSTANCE;
          case LZ4_FRAME ->
              CommonsCompressionFactory.INSTANCE.createCodec(CompressionUtil.CodecType.LZ4_FRAME);
          case ZSTD ->
              CommonsCompressionFactory.INSTANCE.createCodec(CompressionUtil.CodecType.ZSTD);
        };
  }

  /** The schema message that opens a stream, carrying the stream's descriptor. */
  static FlightData schema(Schema schema, FlightDescriptor descriptor) {
    ByteBuffer header = MessageSerializer.serializeMetadata(schema, IpcOption.DEFAULT);
    return FlightData.newBuilder()
        .setFlightDescriptor(descriptor)
        .setDataHeader(ByteString.copyFrom(header))
        .build();
  }

  /** The root's current rows as one record batch message. The root stays the caller's. */
  FlightData batch(VectorSchemaRoot root) {
    VectorUnloader unloader = new VectorUnloader(root, true, codec, true);
    try (ArrowRecordBatch batch = unloader.getRecordBatch()) {
      ByteBuffer header = MessageSerializer.serializeMetadata(batch, IpcOption.DEFAULT);
      return FlightData.newBuilder()
          .setDataHeader(ByteString.copyFrom(header))
          .setDataBody(ByteString.copyFrom(body(batch)))
          .build();
    }
  }

  /** The batch's buffers at the offsets of its layout, padding zeroed. */
  private static byte[] body(ArrowRecordBatch batch) {
    long length = batch.computeBodyLength();
    if (length > ConnectOptions.MAX_MESSAGE_BYTES) {
      throw new IllegalArgumentException(
          "record batch of "
              + length
              + " bytes is over the "
              + ConnectOptions.MAX_MESSAGE_BYTES
              + "-byte message limit: send fewer rows per batch");
    }
    byte[] body = new byte[(int) length];
    List<ArrowBuf> buffers = batch.getBuffers();
    List<ArrowBuffer> layout = batch.getBuffersLayout();
    for (int i = 0; i < buffers.size(); i++) {
      ArrowBuffer at = layout.get(i);
      buffers.get(i).getBytes(0, body, (int) at.getOffset(), (int) at.getSize());
    }
    return body;
  }
}
