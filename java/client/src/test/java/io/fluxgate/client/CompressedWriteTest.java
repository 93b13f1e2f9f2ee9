package io.fluxgate.client;

import static io.fluxgate.client.Rows.row;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.google.protobuf.ByteString;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.arrow.flatbuf.Message;
import org.apache.arrow.flatbuf.MessageHeader;
import org.apache.arrow.flatbuf.RecordBatch;
import org.apache.arrow.flight.impl.Flight;
import org.apache.arrow.vector.VectorSchemaRoot;
import org.apache.arrow.vector.types.pojo.Schema;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A ZSTD log table's batches, sent ZSTD-compressed by a writer opened without a compression, and an
 * LZ4 table's, sent LZ4-compressed when asked, are stored as received: a scan as stored sends back
 * the very buffers the client compressed (the server's own compressors make other bytes), and they
 * read back as written.
 */
class CompressedWriteTest extends ServerTest {

  @ParameterizedTest
  @EnumSource(
      value = Compression.class,
      names = {"ZSTD", "LZ4_FRAME"})
  void batchesAreSentCompressedAndStoredAsReceived(Compression compression) {
    String name = table("compressed");
    client.createTable(
        TableSpec.of(name, Column.of("id", "BIGINT"), Column.of("s", "STRING"))
            .withOptions(Map.of(StoredAsSent.OPT_CODEC, compression.wire(), "bucket.num", "1")),
        false);
    Schema schema = Rows.schema(client, name);
    List<List<Object>> rows = new ArrayList<>();
    // Few rows: Arrow Java's LZ4 (commons-compress) takes seconds for a large batch of them.
    for (long i = 0; i < 2_000; i++) {
      rows.add(row(i, "site-" + (i % 300)));
    }
    List<ByteString> sent;
    try (VectorSchemaRoot batch = Rows.batch(allocator, schema, rows);
        TableWriter w =
            compression == Compression.ZSTD
                ? client.newWriter(WriteRequest.of(name)) // compresses by default
                : client.newWriter(WriteRequest.of(name), compression, 1)) {
      w.write(batch);
      sent =
          compressedBuffers(
              new IpcEncoder(compression, IpcEncoder.DEFAULT_ZSTD_LEVEL).batch(batch));
    }
    assertFalse(sent.isEmpty(), "the client compressed no buffer");

    ScanPlan plan = client.plan(ScanRequest.of(name));
    List<ByteString> stored = new ArrayList<>();
    Iterator<Flight.FlightData> messages =
        client.blocking.doGet(
            Flight.Ticket.newBuilder()
                .setTicket(ByteString.copyFrom(plan.tickets().get(0)))
                .build());
    while (messages.hasNext()) {
      stored.addAll(compressedBuffers(messages.next()));
    }
    assertEquals(sent, stored, "the buffers a scan sends as stored are not those the client sent");
    assertEquals(rows, Rows.read(client, ScanRequest.of(name)));
  }

  /** The buffers of a record batch message that are compressed (not stored as they are). */
  private static List<ByteString> compressedBuffers(Flight.FlightData msg) {
    List<ByteString> out = new ArrayList<>();
    if (msg.getDataHeader().isEmpty()) {
      return out;
    }
    Message m = Message.getRootAsMessage(msg.getDataHeader().asReadOnlyByteBuffer());
    if (m.headerType() != MessageHeader.RecordBatch) {
      return out;
    }
    RecordBatch rb = (RecordBatch) m.header(new RecordBatch());
    ByteBuffer body = msg.getDataBody().asReadOnlyByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
    for (int i = 0; i < rb.buffersLength(); i++) {
      int offset = (int) rb.buffers(i).offset();
      int length = (int) rb.buffers(i).length();
      if (length > 8 && body.getLong(offset) != -1) {
        out.add(msg.getDataBody().substring(offset, offset + length));
      }
    }
    return out;
  }
}
