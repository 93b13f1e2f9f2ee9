package io.fluxgate.spark;

import io.fluxgate.client.ScanRequest;
import java.util.EnumSet;
import java.util.Set;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.connector.write.LogicalWriteInfo;
import org.apache.spark.sql.connector.write.WriteBuilder;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A fluxgate table or view ("db.t", "db.t$changelog", "db.t$lake") as Spark sees it. Its schema is
 * the one the server plans a scan with, so the views' system columns are part of it.
 */
final class FluxgateTable implements SupportsRead, SupportsWrite {
  private final FluxgateOptions connection;
  private final String name;
  private final Schema arrowSchema;

  FluxgateTable(FluxgateOptions connection, String name, Schema arrowSchema) {
    this.connection = connection;
    this.name = name;
    this.arrowSchema = arrowSchema;
  }

  /** Loads the table's schema from the server: GetFlightInfo of its default scan. */
  static FluxgateTable load(FluxgateOptions connection, String name) {
    Schema schema = connection.call(c -> c.plan(ScanRequest.of(name)).schema());
    return new FluxgateTable(connection, name, schema);
  }

  FluxgateOptions connection() {
    return connection;
  }

  Schema arrowSchema() {
    return arrowSchema;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public StructType schema() {
    return ArrowTypes.sparkSchema(arrowSchema);
  }

  @Override
  public Set<TableCapability> capabilities() {
    // Any schema: a DataFrame with some of the columns is a partial update (FluxgateWrite.target).
    return EnumSet.of(
        TableCapability.BATCH_READ,
        TableCapability.MICRO_BATCH_READ,
        TableCapability.BATCH_WRITE,
        TableCapability.STREAMING_WRITE,
        TableCapability.ACCEPT_ANY_SCHEMA);
  }

  @Override
  public ScanBuilder newScanBuilder(CaseInsensitiveStringMap options) {
    return new FluxgateScanBuilder(this, options);
  }

  @Override
  public WriteBuilder newWriteBuilder(LogicalWriteInfo info) {
    return new FluxgateWrite(this, info);
  }
}
