package io.fluxgate.flink;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closing what a task holds. Flink closes operators and functions after a task failed too, and
 * takes an exception from that close for a fatal error: the whole task manager shuts down, with
 * every other job's tasks on it. So a close releases each resource regardless of the others and
 * logs what fails instead of throwing it; the failure that matters was reported already.
 */
public final class Release {
  private static final Logger LOG = LoggerFactory.getLogger(Release.class);

  private Release() {}

  /** Closes each resource (nulls skipped), in order, logging failures as owner's. */
  public static void all(Object owner, AutoCloseable... resources) {
    for (AutoCloseable r : resources) {
      if (r == null) {
        continue;
      }
      try {
        r.close();
      } catch (Exception e) {
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        LOG.warn("closing {} of {}", r, owner, e);
      }
    }
  }
}
