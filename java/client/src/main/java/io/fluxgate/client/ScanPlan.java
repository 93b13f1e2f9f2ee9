package io.fluxgate.client;

import java.util.List;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A planned scan, the FlightInfo of PROTOCOL.md §4.3.
 *
 * @param tickets one per bucket (one in all with a limit), redeemed with {@link
 *     FluxgateClient#read}; each is JSON, complete in itself, and may be stored and redeemed later
 * @param totalRecords the number of rows when the server knows it, else -1
 */
public record ScanPlan(Schema schema, List<byte[]> tickets, long totalRecords, PlanMeta meta) {}
