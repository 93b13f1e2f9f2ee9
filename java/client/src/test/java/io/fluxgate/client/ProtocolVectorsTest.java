package io.fluxgate.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The shared vectors of protocol/testdata (the Go package protocol is the source of the contract):
 * each JSON document is decoded with this client's own classes and re-encoded as the client encodes
 * it, and must come out semantically equal; the invalid documents must be refused.
 *
 * <p>"Semantically equal" is the vectors' rule: equal JSON values once members holding a default
 * are left out (null, false, an empty array or object, and a column's "nullable": true), since the
 * server reads an absent member as its default.
 */
class ProtocolVectorsTest {
  /** From the module's basedir (surefire's working directory), java/client. */
  private static final Path VECTORS =
      Path.of("../../protocol/testdata").toAbsolutePath().normalize();

  /**
   * Documents this client does not model with classes: tickets it passes on as the server made
   * them, and action bodies and answers it builds or reads inline in FluxgateClient (DdlTest and
   * the other server tests check those against the server).
   */
  private static final Set<String> NOT_MODELED =
      Set.of(
          "Ticket",
          "Empty",
          "DatabaseResult",
          "CreateDatabaseRequest",
          "DropDatabaseRequest",
          "ListDatabasesRequest",
          "CreateTableRequest",
          "DropTableRequest",
          "TableRequest",
          "ListTablesRequest",
          "OffsetsRequest",
          "CreatePartitionRequest",
          "DropPartitionRequest",
          "ListPartitionsRequest",
          "LakeCompaction",
          "UndoRequest",
          "ProducerOffsetsRequest",
          "WriterStateRequest",
          "TableStatsRequest",
          "Grant",
          "ListGrantsRequest",
          "ListGrantsResult");

  /** Decoding as strict as the server's: unknown fields, keys given twice and coercions fail. */
  private static final ObjectMapper STRICT =
      JsonMapper.builder(Json.MAPPER.getFactory())
          .propertyNamingStrategy(Json.MAPPER.getPropertyNamingStrategy())
          .serializationInclusion(
              Json.MAPPER
                  .getSerializationConfig()
                  .getDefaultPropertyInclusion()
                  .getValueInclusion())
          .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
          .enable(JsonParser.Feature.STRICT_DUPLICATE_DETECTION)
          .disable(MapperFeature.ALLOW_COERCION_OF_SCALARS)
          .build();

  /** Decodes a document of a type with the client's class and re-encodes it as the client does. */
  private static final Map<String, Function<JsonNode, byte[]>> CODECS =
      Map.ofEntries(
          Map.entry("Command", ProtocolVectorsTest::command),
          Map.entry("PlanMeta", same(PlanMeta.class)),
          Map.entry("BatchMeta", same(BatchMeta.class)),
          Map.entry("PutResult", same(PutResult.class)),
          Map.entry("LookupMeta", same(LookupMeta.class)),
          Map.entry("TableSpec", same(TableSpec.class)),
          Map.entry("TableInfo", same(TableInfo.class)),
          Map.entry("AlterTableRequest", same(AlterRequest.class)),
          Map.entry("ListDatabasesResult", same(FluxgateClient.Databases.class)),
          Map.entry("ListTablesResult", same(FluxgateClient.Tables.class)),
          Map.entry("OffsetsResult", same(FluxgateClient.Offsets.class)),
          Map.entry("ProducerOffsets", same(FluxgateClient.Offsets.class)),
          Map.entry("LakeSnapshot", same(LakeSnapshot.class)),
          Map.entry("UndoResult", same(UndoResult.class)),
          Map.entry("RegisterResult", same(FluxgateClient.Registered.class)),
          Map.entry("WriterState", same(FluxgateClient.WriterState.class)),
          Map.entry("TableStats", same(TableStats.class)),
          Map.entry("PartitionInfo", same(PartitionInfo.class)),
          Map.entry("ListPartitionsResult", same(FluxgateClient.Partitions.class)));

  @TestFactory
  List<DynamicTest> validVectorsRoundTrip() throws IOException {
    return vectorTests(
        "vectors",
        (doc, codec) -> {
          JsonNode want = STRICT.readTree(doc);
          JsonNode got = STRICT.readTree(codec.apply(want));
          assertEquals(withoutDefaults(want), withoutDefaults(got));
        });
  }

  @TestFactory
  List<DynamicTest> invalidVectorsAreRefused() throws IOException {
    return vectorTests(
        "invalid",
        (doc, codec) -> assertThrows(Exception.class, () -> codec.apply(STRICT.readTree(doc))));
  }

  /** What a test asserts of one vector's document, given its type's codec. */
  private interface VectorCheck {
    void check(byte[] doc, Function<JsonNode, byte[]> codec) throws Exception;
  }

  /**
   * A test of each vector in the index's list, by check with the codec of the vector's type; a type
   * without one must be listed as not modeled.
   */
  private static List<DynamicTest> vectorTests(String list, VectorCheck check) throws IOException {
    List<DynamicTest> tests = new ArrayList<>();
    for (JsonNode v : indexed(list)) {
      if (v.path("compare").asText().equals("rows")) {
        continue; // Arrow IPC files: the Python vectors test reads them with pyarrow
      }
      String type = v.get("type").asText();
      tests.add(
          DynamicTest.dynamicTest(
              v.get("name").asText(),
              () -> {
                byte[] doc = read(v.get("file").asText());
                Function<JsonNode, byte[]> codec = CODECS.get(type);
                if (codec == null) {
                  assertTrue(NOT_MODELED.contains(type), type + " is neither modeled nor listed");
                  return;
                }
                check.check(doc, codec);
              }));
    }
    return tests;
  }

  /** The vectors of a list ("vectors" or "invalid") of vectors.json. */
  private static List<JsonNode> indexed(String list) throws IOException {
    if (!Files.isDirectory(VECTORS)) {
      fail(
          "no shared vectors at " + VECTORS + ": run the tests from java/client in the repository");
    }
    List<JsonNode> out = new ArrayList<>();
    STRICT.readTree(read("vectors.json")).get(list).forEach(out::add);
    return out;
  }

  private static byte[] read(String file) throws IOException {
    return Files.readAllBytes(VECTORS.resolve(file));
  }

  private static Function<JsonNode, byte[]> same(Class<?> type) {
    return node -> Json.encode(STRICT.convertValue(node, type));
  }

  /** A CMD descriptor: exactly one request, built again with the client's command encoders. */
  private static byte[] command(JsonNode node) {
    if (node.size() != 1) {
      throw new IllegalArgumentException("want exactly one of scan, write or lookup: " + node);
    }
    Map.Entry<String, JsonNode> e = node.properties().iterator().next();
    JsonNode body = e.getValue();
    return switch (e.getKey()) {
      case "scan" -> Json.command("scan", STRICT.convertValue(body, ScanRequest.class));
      case "write" -> Json.command("write", STRICT.convertValue(body, WriteRequest.class));
      case "lookup" -> lookup((ObjectNode) body.deepCopy());
      default -> throw new IllegalArgumentException("unknown command " + e.getKey());
    };
  }

  private static byte[] lookup(ObjectNode body) {
    JsonNode keys = body.remove("keys");
    LookupRequest req = STRICT.convertValue(body, LookupRequest.class);
    if (keys == null) {
      return Json.command("lookup", req);
    }
    return req.inlineCommand(STRICT.convertValue(keys, new TypeReference<>() {}));
  }

  /** node without the members that hold a default: what the server reads as absent. */
  static JsonNode withoutDefaults(JsonNode node) {
    if (node.isArray()) {
      var out = STRICT.createArrayNode();
      node.forEach(x -> out.add(withoutDefaults(x)));
      return out;
    }
    if (!node.isObject()) {
      return node;
    }
    ObjectNode out = STRICT.createObjectNode();
    for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      JsonNode x = withoutDefaults(e.getValue());
      boolean isDefault =
          x.isNull()
              || (x.isBoolean() && !x.booleanValue())
              || (x.isContainerNode() && x.isEmpty())
              || (e.getKey().equals("nullable") && x.booleanValue());
      if (!isDefault) {
        out.set(e.getKey(), x);
      }
    }
    return out;
  }
}
