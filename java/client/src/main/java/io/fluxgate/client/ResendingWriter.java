package io.fluxgate.client;

import io.grpc.Status;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import org.apache.arrow.vector.FieldVector;
import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * A {@link TableWriter} of an idempotent writer (PROTOCOL.md §5, §5.3) that survives a broken
 * stream: it keeps the batches sent and not yet acknowledged, and when the stream fails as
 * UNAVAILABLE (a server restart, a lost connection) it opens a new one at the first unacknowledged
 * sequence and sends them again, which the server applies once however often they arrive. Other
 * failures, and UNAVAILABLE for longer than the retry time, are thrown. One thread uses it.
 */
public final class ResendingWriter implements AutoCloseable {
  private static final long MAX_BACKOFF_MS = 1000;

  private final FluxgateClient client;
  private final WriteRequest request;
  private final Compression compression;
  private final int maxInFlight;
  private final Duration retryFor;

  /** The batches sent whose result has not been returned, oldest first: the ones to resend. */
  private final ArrayDeque<VectorSchemaRoot> unacknowledged = new ArrayDeque<>();

  private TableWriter writer;
  private long acknowledged; // batches whose result was returned: the next resend's first sequence
  private int reopened;

  /** When the stream broke, if it is broken now (System.nanoTime), else -1. */
  private long brokenSince = -1;

  /**
   * @param request a request with a writer id; its first sequence is where this writer starts
   * @param maxInFlight at most 32 (the batches the server remembers per writer)
   * @param retryFor how long a broken stream is retried before its failure is thrown
   */
  public ResendingWriter(
      FluxgateClient client,
      WriteRequest request,
      Compression compression,
      int maxInFlight,
      Duration retryFor) {
    if (request.writerId() == null) {
      throw new IllegalArgumentException("a resending writer needs a writer id");
    }
    if (maxInFlight > 32) {
      throw new IllegalArgumentException(
          "maxInFlight " + maxInFlight + ": the server remembers the last 32 batches of a writer");
    }
    this.client = client;
    this.compression = compression;
    this.maxInFlight = maxInFlight;
    this.retryFor = retryFor;
    this.acknowledged = request.firstSequence() == null ? 0 : request.firstSequence();
    this.request = request;
    this.writer = open();
  }

  /**
   * Sends the root's rows as one batch, moving its buffers into a batch kept until acknowledged:
   * the root is left empty, for the caller to fill again.
   */
  public void send(VectorSchemaRoot root) {
    // The root's own allocator: Arrow moves buffers only within one allocator tree.
    VectorSchemaRoot kept =
        VectorSchemaRoot.create(root.getSchema(), root.getVector(0).getAllocator());
    List<FieldVector> from = root.getFieldVectors();
    for (int i = 0; i < from.size(); i++) {
      from.get(i).makeTransferPair(kept.getVector(i)).transfer();
    }
    kept.setRowCount(root.getRowCount());
    root.setRowCount(0);
    unacknowledged.addLast(kept);
    try {
      writer.send(kept);
    } catch (FluxgateException e) {
      resend(e); // kept included
    }
  }

  /** The result of the oldest batch whose result was not returned, waiting for it. */
  public PutResult recv() {
    while (true) {
      try {
        PutResult result = writer.recv();
        brokenSince = -1;
        acknowledged++;
        unacknowledged.pollFirst().close();
        return result;
      } catch (FluxgateException e) {
        resend(e);
      }
    }
  }

  /** The results of every batch sent and not yet returned, in send order. */
  public List<PutResult> flush() {
    List<PutResult> out = new ArrayList<>(unacknowledged.size());
    while (!unacknowledged.isEmpty()) {
      out.add(recv());
    }
    return out;
  }

  /** Batches sent whose result was not returned. */
  public int pending() {
    return unacknowledged.size();
  }

  /** How often a broken stream was replaced. */
  public int reopened() {
    return reopened;
  }

  @Override
  public void close() {
    try {
      flush();
      writer.close();
    } finally {
      unacknowledged.forEach(VectorSchemaRoot::close);
      unacknowledged.clear();
    }
  }

  /**
   * Ends the stream without flushing: the batches not acknowledged may or may not be applied. For a
   * caller that failed or is being cancelled, whose failure was reported already; throws nothing.
   */
  public void abandon() {
    try {
      writer.cancel();
    } finally {
      unacknowledged.forEach(VectorSchemaRoot::close);
      unacknowledged.clear();
    }
  }

  private TableWriter open() {
    return client.newWriter(
        request.withWriter(request.writerId(), acknowledged), compression, maxInFlight);
  }

  /** Replaces the broken stream and sends every unacknowledged batch again, or throws. */
  private void resend(FluxgateException failure) {
    if (brokenSince < 0) {
      brokenSince = System.nanoTime();
    }
    long backoff = 50;
    FluxgateException last = failure;
    while (last.code() == Status.Code.UNAVAILABLE
        && System.nanoTime() - brokenSince < retryFor.toNanos()) {
      writer.close(); // the stream's failure is the one handled here: close throws no other
      try {
        Thread.sleep(backoff);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw last;
      }
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      writer = open();
      try {
        for (VectorSchemaRoot batch : unacknowledged) {
          writer.send(batch);
        }
        reopened++;
        return;
      } catch (FluxgateException e) {
        last = e;
      }
    }
    throw last;
  }
}
