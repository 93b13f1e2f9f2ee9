package io.fluxgate.spark;

import org.apache.spark.sql.connector.read.InputPartition;

/**
 * One Flight endpoint of a planned scan: a ticket, complete in itself, and where to redeem it.
 *
 * @param width how many of the stream's columns Spark asked for: 0 when it only counts rows, and
 *     the scan then reads one narrow column for the row counts
 */
record TicketPartition(FluxgateOptions connection, byte[] ticket, int width)
    implements InputPartition {}
