package io.fluxgate.flink;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.UncheckedIOException;
import org.apache.flink.api.connector.source.SourceSplit;

/**
 * One bucket of a scan: a ticket of the scan's plan (PROTOCOL.md §4.3), which is JSON and complete
 * in itself, so resuming is the same ticket with a later start.
 */
final class BucketSplit implements SourceSplit {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final String id;
  private final byte[] ticket;

  BucketSplit(String id, byte[] ticket) {
    this.id = id;
    this.ticket = ticket;
  }

  @Override
  public String splitId() {
    return id;
  }

  byte[] ticket() {
    return ticket;
  }

  /**
   * Whether a ticket can resume at a later offset: a snapshot being sent (a plain-name read of a
   * primary-key table) and a union read's lake part have no offset to resume from inside them.
   */
  boolean resumable() {
    String view = json().path("view").asText();
    return !view.equals("snapshot") && !view.equals("union") && !json().has("then");
  }

  /**
   * This split from next on: the changelog after a snapshot already sent, or the log after the
   * batches already emitted.
   */
  BucketSplit resumeAt(long next) {
    ObjectNode json = json();
    json.put("start", next);
    if (json.has("snapshot")) {
      json.put("snapshot", false);
    }
    try {
      return new BucketSplit(id, JSON.writeValueAsBytes(json));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Whether the ticket begins with a snapshot of the bucket's rows. */
  boolean startsWithSnapshot() {
    JsonNode json = json();
    return json.path("snapshot").asBoolean(false);
  }

  private ObjectNode json() {
    try {
      return (ObjectNode) JSON.readTree(ticket);
    } catch (IOException e) {
      throw new UncheckedIOException("bad ticket of split " + id, e);
    }
  }

  @Override
  public String toString() {
    return "BucketSplit[" + id + "]";
  }
}
