package io.fluxgate.client;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonInclude.Include;
import com.fasterxml.jackson.annotation.JsonUnwrapped;
import java.util.List;
import java.util.Map;

/**
 * The action bodies and answers this client sends and reads that are not public API types, by the
 * names of protocol/schema.json's $defs (the Go types of package protocol). The public ones are
 * their own files: TableSpec, TableInfo, AlterRequest (AlterTableRequest), LakeSnapshot,
 * UndoResult, TableStats, PartitionInfo. ProtocolVectorsTest decodes and re-encodes every shared
 * vector with these.
 */
final class Wire {
  private Wire() {}

  /** One page of a paged listing: its items and the token of the next page (null on the last). */
  interface Page<T> {
    List<T> items();

    String nextPageToken();
  }

  /** An action: its name, and the classes of its body and answer. */
  record Action<B, A>(String name, Class<B> body, Class<A> answer) {}

  // The actions, in the order of PROTOCOL.md §3 (protocol.Actions in Go).

  static final Action<CreateDatabaseRequest, DatabaseResult> CREATE_DATABASE =
      new Action<>("create-database", CreateDatabaseRequest.class, DatabaseResult.class);

  static final Action<DropDatabaseRequest, Empty> DROP_DATABASE =
      new Action<>("drop-database", DropDatabaseRequest.class, Empty.class);

  static final Action<ListDatabasesRequest, ListDatabasesResult> LIST_DATABASES =
      new Action<>("list-databases", ListDatabasesRequest.class, ListDatabasesResult.class);

  static final Action<CreateTableRequest, TableInfo> CREATE_TABLE =
      new Action<>("create-table", CreateTableRequest.class, TableInfo.class);

  static final Action<DropTableRequest, Empty> DROP_TABLE =
      new Action<>("drop-table", DropTableRequest.class, Empty.class);

  static final Action<TableRequest, TableInfo> DESCRIBE_TABLE =
      new Action<>("describe-table", TableRequest.class, TableInfo.class);

  static final Action<ListTablesRequest, ListTablesResult> LIST_TABLES =
      new Action<>("list-tables", ListTablesRequest.class, ListTablesResult.class);

  static final Action<AlterRequest, TableInfo> ALTER_TABLE =
      new Action<>("alter-table", AlterRequest.class, TableInfo.class);

  static final Action<OffsetsRequest, OffsetsResult> LIST_OFFSETS =
      new Action<>("list-offsets", OffsetsRequest.class, OffsetsResult.class);

  static final Action<TableRequest, LakeSnapshot> LAKE_SNAPSHOT =
      new Action<>("lake-snapshot", TableRequest.class, LakeSnapshot.class);

  static final Action<TableRequest, LakeSnapshot> TIER_NOW =
      new Action<>("tier-now", TableRequest.class, LakeSnapshot.class);

  static final Action<TableRequest, LakeCompaction> COMPACT_LAKE =
      new Action<>("compact-lake", TableRequest.class, LakeCompaction.class);

  static final Action<UndoRequest, UndoResult> UNDO =
      new Action<>("undo", UndoRequest.class, UndoResult.class);

  static final Action<ProducerOffsetsRequest, RegisterResult> REGISTER_PRODUCER_OFFSETS =
      new Action<>("register-producer-offsets", ProducerOffsetsRequest.class, RegisterResult.class);

  static final Action<ProducerOffsetsRequest, ProducerOffsets> GET_PRODUCER_OFFSETS =
      new Action<>("get-producer-offsets", ProducerOffsetsRequest.class, ProducerOffsets.class);

  static final Action<ProducerOffsetsRequest, Empty> DELETE_PRODUCER_OFFSETS =
      new Action<>("delete-producer-offsets", ProducerOffsetsRequest.class, Empty.class);

  static final Action<WriterStateRequest, WriterState> WRITER_STATE =
      new Action<>("writer-state", WriterStateRequest.class, WriterState.class);

  static final Action<TableStatsRequest, TableStats> TABLE_STATS =
      new Action<>("table-stats", TableStatsRequest.class, TableStats.class);

  static final Action<Grant, Empty> GRANT = new Action<>("grant", Grant.class, Empty.class);

  static final Action<Grant, Empty> REVOKE = new Action<>("revoke", Grant.class, Empty.class);

  static final Action<ListGrantsRequest, ListGrantsResult> LIST_GRANTS =
      new Action<>("list-grants", ListGrantsRequest.class, ListGrantsResult.class);

  static final Action<CreatePartitionRequest, PartitionInfo> CREATE_PARTITION =
      new Action<>("create-partition", CreatePartitionRequest.class, PartitionInfo.class);

  static final Action<DropPartitionRequest, Empty> DROP_PARTITION =
      new Action<>("drop-partition", DropPartitionRequest.class, Empty.class);

  static final Action<ListPartitionsRequest, ListPartitionsResult> LIST_PARTITIONS =
      new Action<>("list-partitions", ListPartitionsRequest.class, ListPartitionsResult.class);

  /** Every action; ProtocolVectorsTest compares them with schema.json's "actions". */
  static final List<Action<?, ?>> ACTIONS =
      List.of(
          CREATE_DATABASE,
          DROP_DATABASE,
          LIST_DATABASES,
          CREATE_TABLE,
          DROP_TABLE,
          DESCRIBE_TABLE,
          LIST_TABLES,
          ALTER_TABLE,
          LIST_OFFSETS,
          LAKE_SNAPSHOT,
          TIER_NOW,
          COMPACT_LAKE,
          UNDO,
          REGISTER_PRODUCER_OFFSETS,
          GET_PRODUCER_OFFSETS,
          DELETE_PRODUCER_OFFSETS,
          WRITER_STATE,
          TABLE_STATS,
          GRANT,
          REVOKE,
          LIST_GRANTS,
          CREATE_PARTITION,
          DROP_PARTITION,
          LIST_PARTITIONS);

  /** The answer of the actions that return nothing. */
  record Empty() {}

  record TableRequest(String table) {}

  record CreateDatabaseRequest(String database, boolean ifNotExists) {}

  record DatabaseResult(String database) {}

  record DropDatabaseRequest(String database, boolean ifExists, boolean cascade) {}

  record ListDatabasesRequest(Integer maxResults, String pageToken) {}

  record ListDatabasesResult(List<String> databases, String nextPageToken) implements Page<String> {
    @Override
    public List<String> items() {
      return databases;
    }
  }

  /** A TableSpec plus if_not_exists. */
  record CreateTableRequest(@JsonUnwrapped TableSpec spec, boolean ifNotExists) {}

  record DropTableRequest(String table, boolean ifExists) {}

  record ListTablesRequest(String database, Integer maxResults, String pageToken) {}

  record ListTablesResult(List<TableInfo> tables, String nextPageToken) implements Page<TableInfo> {
    @Override
    public List<TableInfo> items() {
      return tables;
    }
  }

  /** The body of list-offsets; at is "earliest", "latest" or a timestamp. */
  // An empty list or map given is sent: it names no bucket or partition, unlike one left out
  // (null), which names them all. Json.MAPPER leaves out empty ones unless told here.
  record OffsetsRequest(
      String table,
      Position at,
      @JsonInclude(Include.NON_NULL) List<Integer> buckets,
      @JsonInclude(Include.NON_NULL) List<String> partitions) {}

  /** Per-bucket offsets, or per partition of a partitioned table. */
  record OffsetsResult(
      Map<Integer, Long> offsets, Map<String, Map<Integer, Long>> partitionOffsets) {}

  record UndoRequest(
      String table,
      @JsonInclude(Include.NON_NULL) Map<Integer, Long> offsets,
      @JsonInclude(Include.NON_NULL) Map<String, Map<Integer, Long>> partitionOffsets) {}

  /** The body of register-, get- and delete-producer-offsets; offsets only in the first. */
  record ProducerOffsetsRequest(
      String producerId,
      String table,
      @JsonInclude(Include.NON_NULL) Map<Integer, Long> offsets,
      @JsonInclude(Include.NON_NULL) Map<String, Map<Integer, Long>> partitionOffsets) {}

  /** "created" or "already_exists". */
  record RegisterResult(String result) {}

  /** A producer's registered offsets: both null when none are registered. */
  record ProducerOffsets(
      Map<Integer, Long> offsets, Map<String, Map<Integer, Long>> partitionOffsets) {}

  record WriterStateRequest(String table, String writerId) {}

  record WriterState(long nextSequence) {}

  record TableStatsRequest(String table, @JsonInclude(Include.NON_NULL) List<String> partitions) {}

  record CreatePartitionRequest(String table, Map<String, String> partition, boolean ifNotExists) {}

  record DropPartitionRequest(String table, Map<String, String> partition, boolean ifExists) {}

  record ListPartitionsRequest(
      String table, Map<String, String> partition, Integer maxResults, String pageToken) {}

  record ListPartitionsResult(List<PartitionInfo> partitions, String nextPageToken)
      implements Page<PartitionInfo> {
    @Override
    public List<PartitionInfo> items() {
      return partitions;
    }
  }

  record ListGrantsRequest(String principal, Integer maxResults, String pageToken) {}

  record ListGrantsResult(List<Grant> grants, String nextPageToken) implements Page<Grant> {
    @Override
    public List<Grant> items() {
      return grants;
    }
  }
}
