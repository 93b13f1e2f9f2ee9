package io.fluxgate.client;

import org.apache.arrow.vector.VectorSchemaRoot;

/**
 * Reads the tickets of a bounded scan one after the other. The current batch lives in {@link
 * #root()} until the next call to {@link #next()}; {@link #meta()} says which bucket and offsets it
 * is.
 */
public final class Scanner implements AutoCloseable {
  private final FluxgateClient client;
  private final ScanPlan plan;
  private int nextTicket;
  private TicketStream current;

  Scanner(FluxgateClient client, ScanPlan plan) {
    this.client = client;
    this.plan = plan;
  }

  public ScanPlan plan() {
    return plan;
  }

  public boolean next() {
    while (true) {
      if (current == null) {
        if (nextTicket >= plan.tickets().size()) {
          return false;
        }
        current = client.read(plan.tickets().get(nextTicket++));
      }
      if (current.next()) {
        return true;
      }
      current.close();
      current = null;
    }
  }

  public VectorSchemaRoot root() {
    return current == null ? null : current.root();
  }

  public BatchMeta meta() {
    return current == null ? null : current.meta();
  }

  @Override
  public void close() {
    if (current != null) {
      current.close();
      current = null;
    }
    nextTicket = plan.tickets().size();
  }
}
