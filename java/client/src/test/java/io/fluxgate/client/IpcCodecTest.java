package io.fluxgate.client;

import static io.fluxgate.client.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.flatbuf.CompressionType;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.flight.impl.Flight.FlightData;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.ArrowType;
import org.apache.arrow.vector.types.pojo.Field;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** What the writer puts on the wire: compressed as asked, and read back the same. */
class IpcCodecTest {
  private static final Schema SCHEMA =
      new Schema(
          List.of(
              Field.nullable("id", new ArrowType.Int(64, true)),
              Field.nullable("s", ArrowType.Utf8.INSTANCE)));

  @ParameterizedTest
  @EnumSource(Compression.class)
  void batchesAreCompressedAsAskedAndDecodeUnchanged(Compression compression) {
    try (RootAllocator allocator = new RootAllocator()) {
      List<List<Object>> rows = new ArrayList<>();
      for (long i = 0; i < 1000; i++) {
        rows.add(row(i % 7, "the same text, again and again"));
      }
      FlightData msg;
      try (VectorSchemaRoot root = Rows.batch(allocator, SCHEMA, rows)) {
        msg = new IpcEncoder(compression, IpcEncoder.DEFAULT_ZSTD_LEVEL).batch(root);
      }
      RecordBatch header =
          (RecordBatch)
              Message.getRootAsMessage(msg.getDataHeader().asReadOnlyByteBuffer())
                  .header(new RecordBatch());
      switch (compression) {
        case NONE -> assertNull(header.compression());
        case LZ4_FRAME -> assertEquals(CompressionType.LZ4_FRAME, header.compression().codec());
        case ZSTD -> assertEquals(CompressionType.ZSTD, header.compression().codec());
      }
      if (compression != Compression.NONE) {
        assertTrue(
            msg.getDataBody().size() < 1000 * 8,
            "compressed body of " + msg.getDataBody().size() + " bytes");
      }

      try (IpcDecoder decoder = new IpcDecoder(allocator)) {
        assertFalse(
            decoder.read(IpcEncoder.schema(SCHEMA, FluxgateClient.pathDescriptor("fluss.t"))));
        assertTrue(decoder.read(msg));
        assertEquals(rows, Rows.rows(decoder.root()));
      }
      assertEquals(0, allocator.getAllocatedMemory());
    }
  }

  /** A batch over 256 KiB has its buffers compressed in parallel, each as a small batch's is. */
  @Test
  void largeBatchesCompressInParallelAndDecodeUnchanged() {
    try (RootAllocator allocator = new RootAllocator()) {
      List<List<Object>> rows = new ArrayList<>();
      for (long i = 0; i < 50_000; i++) {
        rows.add(row(i, "site-" + (i % 300)));
      }
      FlightData msg;
      try (VectorSchemaRoot root = Rows.batch(allocator, SCHEMA, rows)) {
        msg = new IpcEncoder(Compression.ZSTD, IpcEncoder.DEFAULT_ZSTD_LEVEL).batch(root);
      }
      RecordBatch header =
          (RecordBatch)
              Message.getRootAsMessage(msg.getDataHeader().asReadOnlyByteBuffer())
                  .header(new RecordBatch());
      assertEquals(CompressionType.ZSTD, header.compression().codec());
      try (IpcDecoder decoder = new IpcDecoder(allocator)) {
        decoder.read(IpcEncoder.schema(SCHEMA, FluxgateClient.pathDescriptor("fluss.t")));
        assertTrue(decoder.read(msg));
        assertEquals(rows, Rows.rows(decoder.root()));
      }
      assertEquals(0, allocator.getAllocatedMemory());
    }
  }
}
