package io.fluxgate.client;

import com.google.protobuf.ByteString;
import io.grpc.Context;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.MetadataUtils;
import io.grpc.stub.StreamObserver;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.apache.arrow.flight.impl.Flight;
import org.apache.arrow.flight.impl.FlightServiceGrpc;
import org.apache.arrow.memory.BufferAllocator;
import org.apache.arrow.memory.RootAllocator;
import org.apache.arrow.vector.ipc.ReadChannel;
import org.apache.arrow.vector.ipc.message.MessageSerializer;
import org.apache.arrow.vector.types.pojo.Schema;

/**
 * A connection to a fluxgate server: the protocol of docs/PROTOCOL.md for JVM users. Safe for
 * concurrent use; the streams it opens (readers, writers, lookups) are each for one thread.
 *
 * <p>Errors are {@link FluxgateException}s carrying the server's message.
 */
public final class FluxgateClient implements AutoCloseable {
  /**
   * The server's default address: bare, so that it speaks TLS when TLS files are given (a grpc://
   * default would be refused with them, naming an address the user never wrote).
   */
  public static final String DEFAULT_URI = "127.0.0.1:8815";

  private final String uri;
  private final ManagedChannel channel;
  private final ClientThreads threads;
  private final BufferAllocator allocator;
  private final boolean ownsAllocator;
  final FlightServiceGrpc.FlightServiceBlockingStub blocking;
  final FlightServiceGrpc.FlightServiceStub async;

  private FluxgateClient(
      String uri,
      ManagedChannel channel,
      ClientThreads threads,
      BufferAllocator allocator,
      boolean ownsAllocator) {
    this.uri = uri;
    this.channel = channel;
    this.threads = threads;
    this.allocator = allocator;
    this.ownsAllocator = ownsAllocator;
    this.blocking = FlightServiceGrpc.newBlockingStub(channel);
    this.async = FlightServiceGrpc.newStub(channel);
  }

  /** Connects without credentials or TLS files. */
  public static FluxgateClient connect(String uri) {
    return connect(uri, ConnectOptions.defaults());
  }

  /**
   * Connects to uri: "grpc://host:port", "grpc+tcp://host:port", "grpc+tls://host:port" or
   * "host:port". A grpc+tls:// address speaks TLS, and so does a bare host:port given TLS files; a
   * grpc:// or grpc+tcp:// address given TLS files is refused, as the Go client does, rather than
   * connecting in plaintext. With a username, the basic-to-bearer handshake runs here, so bad
   * credentials fail now as {@link FluxgateException.Unauthenticated}; otherwise gRPC connects
   * lazily.
   */
  public static FluxgateClient connect(String uri, ConnectOptions options) {
    Target target = Target.parse(uri, options.hasTlsFiles());
    NettyChannelBuilder builder =
        NettyChannelBuilder.forAddress(target.host, target.port)
            .maxInboundMessageSize(ConnectOptions.MAX_MESSAGE_BYTES)
            // Wider HTTP/2 windows than the 64 KiB default keep bulk reads and writes streaming.
            .flowControlWindow(16 << 20);
    if (target.tls) {
      builder.sslContext(sslContext(options));
    } else {
      builder.usePlaintext();
    }
    BearerAuth auth = new BearerAuth();
    ClientThreads threads = new ClientThreads();
    ManagedChannel channel = threads.use(builder).intercept(auth).build();
    boolean owns = options.allocator() == null;
    BufferAllocator allocator = owns ? new RootAllocator() : options.allocator();
    FluxgateClient client = new FluxgateClient(uri, channel, threads, allocator, owns);
    try {
      // As in the Go client, a handshake's token wins over a static one.
      if (options.username() != null) {
        auth.set(client.handshake(options));
      } else if (options.token() != null) {
        auth.set("Bearer " + options.token());
      }
      return client;
    } catch (RuntimeException e) {
      client.close();
      throw e;
    }
  }

  private static io.netty.handler.ssl.SslContext sslContext(ConnectOptions options) {
    try {
      SslContextBuilder ssl = GrpcSslContexts.forClient();
      if (options.tlsCaFile() != null) {
        ssl.trustManager(options.tlsCaFile().toFile());
      }
      if (options.tlsCertFile() != null || options.tlsKeyFile() != null) {
        if (options.tlsCertFile() == null || options.tlsKeyFile() == null) {
          throw new IllegalArgumentException(
              "a client certificate needs both its certificate and its key file");
        }
        ssl.keyManager(options.tlsCertFile().toFile(), options.tlsKeyFile().toFile());
      }
      return ssl.build();
    } catch (IOException e) {
      throw new IllegalArgumentException("TLS files: " + e.getMessage(), e);
    }
  }

  /** Runs the Flight basic-to-bearer handshake and returns the "Bearer ..." header it gave. */
  private String handshake(ConnectOptions options) {
    String doing = "handshake with " + uri + " as " + options.username();
    Metadata basic = new Metadata();
    String credentials =
        options.username() + ":" + (options.password() == null ? "" : options.password());
    basic.put(
        BearerAuth.AUTHORIZATION,
        "Basic "
            + Base64.getEncoder().encodeToString(credentials.getBytes(StandardCharsets.UTF_8)));
    AtomicReference<Metadata> headers = new AtomicReference<>();
    AtomicReference<Metadata> trailers = new AtomicReference<>();
    CompletableFuture<Void> done = new CompletableFuture<>();
    StreamObserver<Flight.HandshakeRequest> requests =
        async
            .withInterceptors(
                MetadataUtils.newAttachHeadersInterceptor(basic),
                MetadataUtils.newCaptureMetadataInterceptor(headers, trailers))
            .withDeadlineAfter(options.handshakeTimeout().toMillis(), TimeUnit.MILLISECONDS)
            .handshake(
                new StreamObserver<>() {
                  @Override
                  public void onNext(Flight.HandshakeResponse response) {}

                  @Override
                  public void onError(Throwable t) {
                    done.completeExceptionally(t);
                  }

                  @Override
                  public void onCompleted() {
                    done.complete(null);
                  }
                });
    requests.onNext(Flight.HandshakeRequest.getDefaultInstance());
    requests.onCompleted();
    try {
      done.get(options.handshakeTimeout().toMillis() + 1000, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      throw FluxgateException.from(doing, e.getCause(), uri);
    } catch (TimeoutException e) {
      throw FluxgateException.from(
          doing, io.grpc.Status.DEADLINE_EXCEEDED.asRuntimeException(), uri);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw FluxgateException.from(
          doing, io.grpc.Status.CANCELLED.withCause(e).asRuntimeException(), uri);
    }
    for (Metadata md : new Metadata[] {headers.get(), trailers.get()}) {
      String value = md == null ? null : md.get(BearerAuth.AUTHORIZATION);
      if (value != null && value.regionMatches(true, 0, "Bearer ", 0, 7)) {
        return value;
      }
    }
    throw new FluxgateException.Unauthenticated(doing + ": no bearer token in the response", null);
  }

  /** The address the client was connected with. */
  public String uri() {
    return uri;
  }

  /** The allocator of the batches this client reads. */
  public BufferAllocator allocator() {
    return allocator;
  }

  // ---- Actions (PROTOCOL.md §3) ----

  /**
   * Runs an action with a JSON body (any object Jackson writes; null sends {}) and returns its
   * result body.
   */
  public byte[] action(String type, Object body) {
    byte[] payload = body == null ? "{}".getBytes(StandardCharsets.UTF_8) : Json.encode(body);
    Flight.Action action =
        Flight.Action.newBuilder().setType(type).setBody(ByteString.copyFrom(payload)).build();
    try (Context.CancellableContext ctx = Context.current().withCancellation()) {
      return ctx.call(
          () -> {
            Iterator<Flight.Result> results = blocking.doAction(action);
            byte[] first = null;
            while (results.hasNext()) { // one result; drain to see the call's final status
              Flight.Result r = results.next();
              if (first == null) {
                first = r.getBody().toByteArray();
              }
            }
            return first == null ? new byte[0] : first;
          });
    } catch (Exception e) {
      throw FluxgateException.from(type, e, uri);
    }
  }

  /** Runs an action with its body and decodes its answer. */
  private <B, A> A action(Wire.Action<B, A> action, B body) {
    byte[] answer = action(action.name(), body);
    if (answer.length == 0) {
      throw new FluxgateException(
          io.grpc.Status.Code.INTERNAL, action.name() + ": the server returned no result");
    }
    return Json.decode(answer, action.answer(), action.name() + " result");
  }

  /** Every item of a paged listing (PROTOCOL.md §3), following its page tokens from the first. */
  private <B, T> List<T> listAll(
      Wire.Action<B, ? extends Wire.Page<T>> listing, Function<String, B> bodyFor) {
    List<T> out = new ArrayList<>();
    for (String token = null; ; ) {
      Wire.Page<T> page = action(listing, bodyFor.apply(token));
      out.addAll(page.items());
      if ((token = page.nextPageToken()) == null || token.isEmpty()) {
        return out;
      }
    }
  }

  public void createDatabase(String database, boolean ifNotExists) {
    action(Wire.CREATE_DATABASE, new Wire.CreateDatabaseRequest(database, ifNotExists));
  }

  public void dropDatabase(String database, boolean ifExists, boolean cascade) {
    action(Wire.DROP_DATABASE, new Wire.DropDatabaseRequest(database, ifExists, cascade));
  }

  /** Every database, following the listing's pages (PROTOCOL.md §3). */
  public List<String> listDatabases() {
    return listAll(Wire.LIST_DATABASES, token -> new Wire.ListDatabasesRequest(null, token));
  }

  /** Creates a table and returns it as stored; with ifNotExists an existing one is returned. */
  public TableInfo createTable(TableSpec spec, boolean ifNotExists) {
    return action(Wire.CREATE_TABLE, new Wire.CreateTableRequest(spec, ifNotExists));
  }

  public void dropTable(String table, boolean ifExists) {
    action(Wire.DROP_TABLE, new Wire.DropTableRequest(table, ifExists));
  }

  public TableInfo describeTable(String table) {
    return action(Wire.DESCRIBE_TABLE, new Wire.TableRequest(table));
  }

  /** The tables of a database, or of every database when database is null. */
  public List<TableInfo> listTables(String database) {
    return listAll(Wire.LIST_TABLES, token -> new Wire.ListTablesRequest(database, null, token));
  }

  public TableInfo alterTable(AlterRequest request) {
    return action(Wire.ALTER_TABLE, request);
  }

  /**
   * Creates a partition of a partitioned table, given one value per partition key; with ifNotExists
   * an existing one is returned.
   */
  public PartitionInfo createPartition(
      String table, Map<String, String> spec, boolean ifNotExists) {
    return action(Wire.CREATE_PARTITION, new Wire.CreatePartitionRequest(table, spec, ifNotExists));
  }

  /** Drops a partition with its rows; with ifExists a missing one is no error. */
  public void dropPartition(String table, Map<String, String> spec, boolean ifExists) {
    action(Wire.DROP_PARTITION, new Wire.DropPartitionRequest(table, spec, ifExists));
  }

  /** Every partition of a partitioned table, in name order. */
  public List<PartitionInfo> listPartitions(String table) {
    return listPartitions(table, Map.of());
  }

  /**
   * The partitions whose values match a partial spec (some partition keys' values; empty matches
   * all), in name order, following the listing's pages.
   */
  public List<PartitionInfo> listPartitions(String table, Map<String, String> partialSpec) {
    return listAll(
        Wire.LIST_PARTITIONS,
        token -> new Wire.ListPartitionsRequest(table, partialSpec, null, token));
  }

  /**
   * Per bucket, the offset at {@link Position#EARLIEST}, {@link Position#LATEST} or a timestamp.
   * Null buckets means all.
   */
  public Map<Integer, Long> listOffsets(String table, Position at, List<Integer> buckets) {
    return action(Wire.LIST_OFFSETS, new Wire.OffsetsRequest(table, at, buckets, null)).offsets();
  }

  /**
   * Of a partitioned table, per partition name and bucket, the offset at {@link Position#EARLIEST},
   * {@link Position#LATEST} or a timestamp. Null partitions means all.
   */
  public Map<String, Map<Integer, Long>> listPartitionOffsets(
      String table, Position at, List<String> partitions) {
    return action(Wire.LIST_OFFSETS, new Wire.OffsetsRequest(table, at, null, partitions))
        .partitionOffsets();
  }

  /**
   * A table's rows, in all and per bucket, without reading them (table-stats): a primary-key
   * table's current rows (the server keeps the count with them), a log table's retained ones (its
   * offsets). FAILED_PRECONDITION for what has no such count: a view, a primary-key table with
   * table.changelog.image = wal, a lake-enabled log table.
   */
  public TableStats tableStats(String table) {
    return tableStats(table, null);
  }

  /** {@link #tableStats(String)} of a partitioned table's partitions, by name; null means all. */
  public TableStats tableStats(String table, List<String> partitions) {
    return action(Wire.TABLE_STATS, new Wire.TableStatsRequest(table, partitions));
  }

  /**
   * COUNT(*) of what a batch read of the table returns, in one call: {@link #tableStats}'s row
   * count, or empty when the server keeps none (a view, whose name is not asked about; a WAL-image
   * primary-key table; a lake-enabled log table, whose tiered rows may have left the log).
   */
  public OptionalLong rowCount(String table) {
    if (table.contains("$")) {
      return OptionalLong.empty();
    }
    try {
      return OptionalLong.of(tableStats(table).rowCount());
    } catch (FluxgateException.FailedPrecondition e) {
      return OptionalLong.empty();
    }
  }

  /** The table's latest lake snapshot; NOT_FOUND before the first lake commit. */
  public LakeSnapshot lakeSnapshot(String table) {
    return action(Wire.LAKE_SNAPSHOT, new Wire.TableRequest(table));
  }

  /** Runs one tiering round of a lake-enabled table now. */
  public LakeSnapshot tierNow(String table) {
    return action(Wire.TIER_NOW, new Wire.TableRequest(table));
  }

  /** Compacts a lake-enabled table's lake now (PROTOCOL.md §7.5); needs write. */
  public LakeCompaction compactLake(String table) {
    return action(Wire.COMPACT_LAKE, new Wire.TableRequest(table));
  }

  /**
   * Brings buckets of a primary-key table back to their state at these offsets (PROTOCOL.md §5.4);
   * buckets not named are left alone.
   */
  public UndoResult undo(String table, Map<Integer, Long> offsets) {
    return action(Wire.UNDO, new Wire.UndoRequest(table, offsets, null));
  }

  /**
   * Undo of a partitioned primary-key table: the named partitions' buckets back to these offsets;
   * what is not named is left alone.
   */
  public UndoResult undoPartitions(String table, Map<String, Map<Integer, Long>> offsets) {
    return action(Wire.UNDO, new Wire.UndoRequest(table, null, offsets));
  }

  /**
   * Stores a producer's starting offsets of a table unless some are stored already (PROTOCOL.md
   * §5.4); true when these were stored.
   */
  public boolean registerProducerOffsets(
      String producerId, String table, Map<Integer, Long> offsets) {
    return register(new Wire.ProducerOffsetsRequest(producerId, table, offsets, null));
  }

  /** {@link #registerProducerOffsets} of a partitioned table, offsets per partition name. */
  public boolean registerProducerPartitionOffsets(
      String producerId, String table, Map<String, Map<Integer, Long>> offsets) {
    return register(new Wire.ProducerOffsetsRequest(producerId, table, null, offsets));
  }

  private boolean register(Wire.ProducerOffsetsRequest body) {
    return "created".equals(action(Wire.REGISTER_PRODUCER_OFFSETS, body).result());
  }

  /** The offsets a producer registered for a partitioned table, per partition name, if any. */
  public Optional<Map<String, Map<Integer, Long>>> producerPartitionOffsets(
      String producerId, String table) {
    return Optional.ofNullable(producerOffsetsOf(producerId, table).partitionOffsets());
  }

  /** The offsets a producer registered for a table, if any. */
  public Optional<Map<Integer, Long>> producerOffsets(String producerId, String table) {
    return Optional.ofNullable(producerOffsetsOf(producerId, table).offsets());
  }

  private Wire.ProducerOffsets producerOffsetsOf(String producerId, String table) {
    return action(
        Wire.GET_PRODUCER_OFFSETS, new Wire.ProducerOffsetsRequest(producerId, table, null, null));
  }

  /** Forgets the offsets a producer registered for a table; forgetting none is no error. */
  public void deleteProducerOffsets(String producerId, String table) {
    action(
        Wire.DELETE_PRODUCER_OFFSETS,
        new Wire.ProducerOffsetsRequest(producerId, table, null, null));
  }

  /**
   * The sequence the idempotent writer's next batch takes (PROTOCOL.md §5.3): one past its last
   * applied batch, or 0 when the table knows no state of it (never written, or expired). A writer
   * that replays its batches in a fixed order skips the first that many.
   */
  public long writerState(String table, String writerId) {
    return action(Wire.WRITER_STATE, new Wire.WriterStateRequest(table, writerId)).nextSequence();
  }

  /** Admins: grants a principal operations on a database or table (PROTOCOL.md §8). */
  public void grant(Grant grant) {
    action(Wire.GRANT, grant);
  }

  /** Admins: revokes operations a grant gave. */
  public void revoke(Grant grant) {
    action(Wire.REVOKE, grant);
  }

  /** Admins: the grants of a principal, or all when principal is null, following the pages. */
  public List<Grant> listGrants(String principal) {
    return listAll(Wire.LIST_GRANTS, token -> new Wire.ListGrantsRequest(principal, null, token));
  }

  /** What {@link #partitionDropped} reads of a ticket. */
  record PartitionTicket(long tableId, String table, Long partitionId, List<Object> then) {}

  // ---- Reading (PROTOCOL.md §4) ----

  /** Plans a scan: GetFlightInfo with CMD {"scan": request}. */
  public ScanPlan plan(ScanRequest request) {
    return plan(
        "scan " + request.table(),
        Flight.FlightDescriptor.newBuilder()
            .setType(Flight.FlightDescriptor.DescriptorType.CMD)
            .setCmd(ByteString.copyFrom(Json.command("scan", request)))
            .build());
  }

  /** Plans the default scan of a table, through PATH [database, table]. */
  public ScanPlan planTable(String table) {
    return plan("scan " + table, pathDescriptor(table));
  }

  private ScanPlan plan(String doing, Flight.FlightDescriptor descriptor) {
    Flight.FlightInfo info;
    try {
      info = blocking.getFlightInfo(descriptor);
    } catch (RuntimeException e) {
      throw FluxgateException.from(doing, e, uri);
    }
    List<byte[]> tickets = new ArrayList<>();
    for (Flight.FlightEndpoint ep : info.getEndpointList()) {
      tickets.add(ep.getTicket().getTicket().toByteArray());
    }
    PlanMeta meta =
        info.getAppMetadata().isEmpty()
            ? null
            : Json.decode(
                info.getAppMetadata().toByteArray(),
                PlanMeta.class,
                doing + " FlightInfo app_metadata");
    return new ScanPlan(schema(info.getSchema(), doing), tickets, info.getTotalRecords(), meta);
  }

  private static Schema schema(ByteString ipc, String doing) {
    if (ipc.isEmpty()) {
      return null;
    }
    try {
      return MessageSerializer.deserializeSchema(
          new ReadChannel(Channels.newChannel(new ByteArrayInputStream(ipc.toByteArray()))));
    } catch (IOException e) {
      throw new FluxgateException(
          io.grpc.Status.Code.INTERNAL, doing + ": bad FlightInfo schema: " + e.getMessage(), e);
    }
  }

  /** Redeems one ticket of a plan (DoGet). */
  public TicketStream read(byte[] ticket) {
    return new TicketStream(this, ticket);
  }

  /**
   * Whether the partition that ticket reads was dropped (by hand, or by automatic partition
   * retention) while its table remains: then a read of it that failed with NOT_FOUND may end as
   * Fluss's readers end a dropped partition's bucket, without its rows. Told by the table's id and
   * partitions now, not by the error's text. False for a table that is not partitioned, a ticket
   * whose ranges span partitions (a limited scan: the others must still be read), and when the
   * check itself fails.
   */
  public boolean partitionDropped(byte[] ticket) {
    PartitionTicket t = Json.decode(ticket, PartitionTicket.class, "ticket");
    boolean spans = t.then() != null && !t.then().isEmpty();
    if (t.partitionId() == null || t.partitionId() <= 0 || spans) {
      return false; // not partitioned, a lake-only partition, or several partitions
    }
    String table = t.table().split("\\$", 2)[0]; // a view's ticket names table$view
    try {
      return describeTable(table).tableId() == t.tableId()
          && listPartitions(table).stream().noneMatch(p -> p.partitionId() == t.partitionId());
    } catch (FluxgateException e) {
      return false; // the table is gone too, or the server is: the read failed
    }
  }

  /**
   * Plans a scan and reads its tickets one after the other. For an unbounded scan of several
   * buckets, read each ticket of {@link #plan} on its own thread instead: a follow never ends, so a
   * Scanner would not get past the first bucket.
   */
  public Scanner scan(ScanRequest request) {
    return new Scanner(this, plan(request));
  }

  // ---- Writing (PROTOCOL.md §5) and lookups (§6) ----

  /**
   * Opens a DoPut stream that sends batches up to 16 ahead of their results, compressed with ZSTD
   * at the table's level for a log table compressed with ZSTD (the default), which the server
   * stores as received (PROTOCOL.md §5); else uncompressed.
   */
  public TableWriter newWriter(WriteRequest request) {
    TableInfo info;
    try {
      info = describeTable(request.table());
    } catch (FluxgateException e) {
      // Not described (a caller without the right to): uncompressed, which every table takes.
      return newWriter(
          request,
          Compression.NONE,
          IpcEncoder.DEFAULT_ZSTD_LEVEL,
          TableWriter.DEFAULT_MAX_IN_FLIGHT);
    }
    return newWriter(
        request,
        StoredAsSent.compression(info),
        StoredAsSent.zstdLevel(info),
        TableWriter.DEFAULT_MAX_IN_FLIGHT);
  }

  /**
   * Opens a DoPut stream for request. Batches are sent with this compression (ZSTD at level 1, the
   * tables' default), and at most maxInFlight of them are sent ahead of their results.
   */
  public TableWriter newWriter(WriteRequest request, Compression compression, int maxInFlight) {
    return newWriter(request, compression, IpcEncoder.DEFAULT_ZSTD_LEVEL, maxInFlight);
  }

  private TableWriter newWriter(
      WriteRequest request, Compression compression, int zstdLevel, int maxInFlight) {
    Flight.FlightDescriptor descriptor =
        request.isPlain()
            ? pathDescriptor(request.table())
            : Flight.FlightDescriptor.newBuilder()
                .setType(Flight.FlightDescriptor.DescriptorType.CMD)
                .setCmd(ByteString.copyFrom(Json.command("write", request)))
                .build();
    return new TableWriter(this, request.table(), descriptor, compression, zstdLevel, maxInFlight);
  }

  /** Opens a lookup stream (DoExchange). */
  public Lookuper lookup(LookupRequest request) {
    Flight.FlightDescriptor descriptor =
        Flight.FlightDescriptor.newBuilder()
            .setType(Flight.FlightDescriptor.DescriptorType.CMD)
            .setCmd(ByteString.copyFrom(Json.command("lookup", request)))
            .build();
    return new Lookuper(this, request.table(), descriptor);
  }

  /**
   * Plans a lookup of a few keys through GetFlightInfo (PROTOCOL.md §6.3): one ticket whose stream
   * is the answer, _key_index indexing keys. Keys are objects of the key columns, values as in
   * filters. The lookup runs (and inserts, if asked) when the ticket is read.
   */
  public ScanPlan planLookup(LookupRequest request, List<Map<String, Object>> keys) {
    return plan(
        "lookup " + request.table(),
        Flight.FlightDescriptor.newBuilder()
            .setType(Flight.FlightDescriptor.DescriptorType.CMD)
            .setCmd(ByteString.copyFrom(request.inlineCommand(keys)))
            .build());
  }

  /** PATH [database, table], or [table] for a name without a database. */
  static Flight.FlightDescriptor pathDescriptor(String table) {
    Flight.FlightDescriptor.Builder b =
        Flight.FlightDescriptor.newBuilder().setType(Flight.FlightDescriptor.DescriptorType.PATH);
    int dot = table.indexOf('.');
    if (dot < 0) {
      b.addPath(table);
    } else {
      b.addPath(table.substring(0, dot)).addPath(table.substring(dot + 1));
    }
    return b.build();
  }

  /**
   * Closes the connection and stops its threads, waiting for them; streams still open fail. An
   * allocator the client made is closed too, which fails if batches read through it were not
   * closed.
   */
  @Override
  public void close() {
    channel.shutdownNow();
    try {
      channel.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    threads.close();
    if (ownsAllocator) {
      allocator.close();
    }
  }

  /** A parsed address. */
  private record Target(String host, int port, boolean tls) {
    private static final String FORMS = "want host:port, grpc://host:port or grpc+tls://host:port";

    /** withTls: TLS files were given, which a bare host:port then speaks TLS with. */
    static Target parse(String uri, boolean withTls) {
      String rest = uri;
      boolean tls = withTls;
      boolean plain = false; // the address says plain gRPC
      if (uri.startsWith("grpc+tls://")) {
        rest = uri.substring("grpc+tls://".length());
        tls = true;
      } else if (uri.startsWith("grpc+tcp://")) {
        rest = uri.substring("grpc+tcp://".length());
        plain = true;
      } else if (uri.startsWith("grpc://")) {
        rest = uri.substring("grpc://".length());
        plain = true;
      } else if (uri.contains("://")) {
        throw new IllegalArgumentException("address " + uri + ": " + FORMS);
      }
      if (rest.endsWith("/")) {
        rest = rest.substring(0, rest.length() - 1);
      }
      int colon = rest.lastIndexOf(':');
      if (colon <= 0 || rest.contains("/")) {
        throw new IllegalArgumentException("address " + uri + ": " + FORMS);
      }
      if (plain && withTls) {
        throw new IllegalArgumentException(
            "address " + uri + " is plain gRPC but TLS files were given: use grpc+tls://" + rest);
      }
      String host = rest.substring(0, colon);
      if (host.startsWith("[") && host.endsWith("]")) {
        host = host.substring(1, host.length() - 1);
      }
      try {
        return new Target(host, Integer.parseInt(rest.substring(colon + 1)), tls);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("address " + uri + ": bad port", e);
      }
    }
  }
}
