package io.fluxgate.client;

import com.google.protobuf.ByteString;
import com.google.protobuf.UnsafeByteOperations;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import org.apache.arrow.compression.CommonsCompressionFactory;
import org.apache.arrow.flatbuf.BodyCompressionMethod;
import org.apache.arrow.flight.impl.Flight.FlightData;
import org.apache.arrow.flight.impl.Flight.FlightDescriptor;
import org.apache.arrow.memory.ArrowBuf;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.VectorUnloader;
import org.apache.arrow.vector.compression.CompressionCodec;
import org.apache.arrow.vector.compression.CompressionUtil;
import org.apache.arrow.vector.compression.NoCompressionCodec;
import org.apache.arrow.vector.ipc.message.ArrowBodyCompression;
import org.apache.arrow.vector.ipc.message.ArrowBuffer;
import org.apache.arrow.vector.ipc.message.ArrowRecordBatch;
import org.apache.arrow.vector.ipc.message.IpcOption;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * Turns Arrow schemas and batches into FlightData messages. Arrow Java's Flight client cannot
 * compress what it sends (nor decompress what it reads), so the client speaks FlightData itself:
 * the IPC header and body of each message, with the body's buffers compressed when asked, each on
 * its own and those of a large batch in parallel (Arrow Java's unloader compresses them one after
 * the other), as the Go client and the server's log do.
 */
final class IpcEncoder {
  /** The ZSTD level of the server's tables by default (table.log.arrow.compression.zstd.level). */
  static final int DEFAULT_ZSTD_LEVEL = 1;

  /** The body size from which a batch's buffers are compressed in parallel. */
  private static final long PARALLEL_BYTES = 256 << 10;

  private final CompressionCodec codec;

  IpcEncoder(Compression compression, int zstdLevel) {
    this.codec =
        switch (compression == null ? Compression.NONE : compression) {
          case NONE -> NoCompressionCodec.INSTANCE;
          case LZ4_FRAME ->
              CommonsCompressionFactory.INSTANCE.createCodec(CompressionUtil.CodecType.LZ4_FRAME);
          case ZSTD ->
              CommonsCompressionFactory.INSTANCE.createCodec(
                  CompressionUtil.CodecType.ZSTD, zstdLevel);
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
    VectorUnloader unloader = new VectorUnloader(root, true, NoCompressionCodec.INSTANCE, true);
    try (ArrowRecordBatch raw = unloader.getRecordBatch()) {
      if (codec.getCodecType() == CompressionUtil.CodecType.NO_COMPRESSION
          || raw.getBuffers().isEmpty()) {
        return message(raw);
      }
      try (ArrowRecordBatch compressed = compress(raw)) {
        return message(compressed);
      }
    }
  }

  private static FlightData message(ArrowRecordBatch batch) {
    ByteBuffer header = MessageSerializer.serializeMetadata(batch, IpcOption.DEFAULT);
    return FlightData.newBuilder()
        .setDataHeader(ByteString.copyFrom(header))
        // The body is made for this message alone: wrapped, not copied again.
        .setDataBody(UnsafeByteOperations.unsafeWrap(body(batch)))
        .build();
  }

  /** raw with each of its buffers compressed, those of a large batch in parallel. */
  private ArrowRecordBatch compress(ArrowRecordBatch raw) {
    List<ArrowBuf> buffers = raw.getBuffers();
    BufferAllocator allocator = buffers.get(0).getReferenceManager().getAllocator();
    ArrowBuf[] packed = new ArrowBuf[buffers.size()];
    IntStream indexes = IntStream.range(0, packed.length);
    if (raw.computeBodyLength() >= PARALLEL_BYTES) {
      indexes = indexes.parallel();
    }
    try {
      indexes.forEach(
          i -> {
            ArrowBuf buf = buffers.get(i);
            buf.getReferenceManager().retain(); // compress releases the buffer it is given
            packed[i] = codec.compress(allocator, buf);
          });
    } catch (RuntimeException e) {
      for (ArrowBuf b : packed) {
        if (b != null) {
          b.close();
        }
      }
      throw e;
    }
    return new ArrowRecordBatch(
        raw.getLength(),
        raw.getNodes(),
        new ArrayList<>(List.of(packed)),
        new ArrowBodyCompression(codec.getCodecType().getType(), BodyCompressionMethod.BUFFER),
        raw.getVariadicBufferCounts(),
        true,
        false);
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
