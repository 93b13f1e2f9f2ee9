package io.fluxgate.flink.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Each kind of split: told from its ticket, through the serializer and back, and its next kind. */
public class BucketSplitTest {
  private static final List<String> KEY = List.of("id", "tag");

  private static BucketSplit split(String ticket, BucketSplit.Cut... cuts) {
    return BucketSplit.of(
        "ticket-5", ticket.getBytes(StandardCharsets.UTF_8), KEY, Arrays.asList(cuts));
  }

  private static BucketSplit roundTrip(BucketSplit split) throws Exception {
    return BucketSplitSerializer.SPLIT.deserialize(
        BucketSplitSerializer.SPLIT.getVersion(), BucketSplitSerializer.SPLIT.serialize(split));
  }

  static final String LOG =
      "{\"v\":1,\"table\":\"fluss.t\",\"bucket\":0,\"start\":7,\"stop\":null}";
  static final String SNAPSHOT =
      "{\"v\":1,\"table\":\"fluss.t$changelog\",\"bucket\":0,\"snapshot\":true,\"start\":0}";
  static final String SNAPSHOT_VIEW =
      "{\"v\":1,\"table\":\"fluss.t\",\"view\":\"snapshot\",\"bucket\":0}";
  static final String UNION =
      "{\"v\":1,\"table\":\"fluss.t\",\"view\":\"union\",\"bucket\":0,\"start\":20,"
          + "\"lake_snapshot_id\":3,\"lake_start\":0}";
  static final String MULTI =
      "{\"v\":1,\"table\":\"fluss.t\",\"bucket\":0,\"start\":0,\"then\":[{\"bucket\":1}]}";

  @Test
  void everyKindRoundTripsAsItself() throws Exception {
    List<BucketSplit> splits =
        List.of(
            split(LOG, new BucketSplit.Cut(List.of(4, "d"), 9), new BucketSplit.Cut(null, 12)),
            split(SNAPSHOT, new BucketSplit.Cut(List.of(4, "d"), 9)),
            split(SNAPSHOT_VIEW),
            split(UNION),
            split(MULTI));
    List<Class<?>> kinds =
        List.of(
            LogSplit.class,
            SnapshotSplit.class,
            SnapshotSplit.class,
            LakeSplit.class,
            MultiBucketSplit.class);
    for (int i = 0; i < splits.size(); i++) {
      BucketSplit back = roundTrip(splits.get(i));
      assertInstanceOf(kinds.get(i), back);
      assertEquals(splits.get(i), back);
      assertEquals(splits.get(i).cuts(), back.cuts());
      assertEquals(KEY, back.keyColumns());
    }
  }

  @Test
  void aVersion1StateIsTheTicketAloneOfItsKind() throws Exception {
    // Version 1 held the ticket itself where version 2 holds the state.
    byte[] ticket = UNION.getBytes(StandardCharsets.UTF_8);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      out.writeInt(1);
      out.writeUTF("ticket-5");
      out.writeInt(ticket.length);
      out.write(ticket);
    }
    BucketSplit back = BucketSplitSerializer.SPLIT.deserialize(1, bytes.toByteArray());
    assertInstanceOf(LakeSplit.class, back);
    assertEquals(List.of(), back.keyColumns());
    assertEquals(List.of(), back.cuts());
  }

  @Test
  void aSnapshotIsFollowedByItsChangelogFromTheEarliestCut() {
    SnapshotSplit s = (SnapshotSplit) split(SNAPSHOT, new BucketSplit.Cut(List.of(4, "d"), 9));
    BucketSplit rest = s.afterSnapshot(15);
    assertInstanceOf(LogSplit.class, rest);
    assertEquals(9, rest.json().get("start").asLong());
    assertEquals(
        List.of(new BucketSplit.Cut(List.of(4, "d"), 9), new BucketSplit.Cut(null, 15)),
        rest.cuts());
    assertNull(((SnapshotSplit) split(SNAPSHOT_VIEW)).afterSnapshot(15), "a snapshot view ends");
    // Once the log is past every cut, they are dropped.
    assertEquals(List.of(), ((LogSplit) rest).resumeAt(16).cuts());
  }

  @Test
  void aUnionReadsTheLakeThenBecomesALogRead() {
    LakeSplit union = (LakeSplit) split(UNION);
    BucketSplit inLake = union.resumeAt(5);
    assertInstanceOf(LakeSplit.class, inLake);
    assertEquals(5, inLake.json().get("lake_start").asLong());
    BucketSplit inLog = union.resumeAt(25);
    assertInstanceOf(LogSplit.class, inLog);
    assertEquals(25, inLog.json().get("start").asLong());
    assertEquals("log", inLog.json().get("view").asText());
  }
}
