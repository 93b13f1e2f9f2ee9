package io.fluxgate.spark;

import io.fluxgate.client.ScanRequest;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.apache.arrow.vector.types.pojo.Schema;
import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.SupportsWrite;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.expressions.Expressions;
import org.apache.spark.sql.connector.expressions.Transform;
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

  /** The table's partition keys; empty when it is not partitioned. */
  private final List<String> partitionKeys;

  FluxgateTable(
      FluxgateOptions connection, String name, Schema arrowSchema, List<String> partitionKeys) {
    this.connection = connection;
    this.name = name;
    this.arrowSchema = arrowSchema;
    this.partitionKeys = List.copyOf(partitionKeys);
  }

  /**
   * Loads the table's schema from the server (GetFlightInfo of its default scan) and its partition
   * keys (those of the table a view is of).
   */
  static FluxgateTable load(FluxgateOptions connection, String name) {
    String base = name.contains("$") ? name.substring(0, name.indexOf('$')) : name;
    return connection.call(
        c -> {
          Schema schema = c.plan(ScanRequest.of(name)).schema();
          List<String> keys = c.describeTable(base).partitionKeys();
          return new FluxgateTable(connection, name, schema, keys == null ? List.of() : keys);
        });
  }

  boolean partitioned() {
    return !partitionKeys.isEmpty();
  }

  /** One identity transform per partition key: Spark then knows the partition columns. */
  @Override
  public Transform[] partitioning() {
    return partitionKeys.stream().map(Expressions::identity).toArray(Transform[]::new);
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
        // Declared so that mode("overwrite") reaches FluxgateWrite.truncate, which refuses it
        // saying why, instead of Spark's generic "cannot be written with Overwrite mode".
        TableCapability.TRUNCATE,
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
