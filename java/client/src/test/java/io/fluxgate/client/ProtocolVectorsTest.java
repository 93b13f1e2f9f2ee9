package io.fluxgate.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.annotation.JsonUnwrapped;
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
import org.junit.jupiter.api.Test;
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

  /** The documents that are no action's body or answer, by their schema.json names. */
  private static final Map<String, Class<?>> DOCUMENTS =
      Map.of(
          "PlanMeta", PlanMeta.class,
          "BatchMeta", BatchMeta.class,
          "PutResult", PutResult.class,
          "LookupMeta", LookupMeta.class,
          "TableSpec", TableSpec.class,
          "TableInfo", TableInfo.class);

  /** The public classes whose names are not schema.json's. */
  private static final Map<Class<?>, String> SCHEMA_NAMES =
      Map.of(AlterRequest.class, "AlterTableRequest");

  private static String schemaName(Class<?> type) {
    return SCHEMA_NAMES.getOrDefault(type, type.getSimpleName());
  }

  /**
   * The class this client decodes and encodes a vector's document with: an action's body or answer
   * class (Wire.ACTIONS), a document's, or the command encoders; null for a type vectors.json lists
   * as opaque.
   */
  private static Function<JsonNode, byte[]> codec(JsonNode v) {
    String type = v.get("type").asText();
    if (type.equals("Command")) {
      return ProtocolVectorsTest::command;
    }
    Class<?> cls = DOCUMENTS.get(type);
    if (v.has("action")) {
      Wire.Action<?, ?> a = action(v.get("action").asText());
      cls = v.path("kind").asText().equals("action_answer") ? a.answer() : a.body();
    }
    if (cls == null) {
      return null;
    }
    assertEquals(type, schemaName(cls), v.get("name").asText() + ": the client's class");
    return same(cls);
  }

  private static Wire.Action<?, ?> action(String name) {
    return Wire.ACTIONS.stream()
        .filter(a -> a.name().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("the client has no action " + name));
  }

  @TestFactory
  List<DynamicTest> validVectorsRoundTrip() throws IOException {
    return vectorTests(
        "vectors",
        (v, doc, codec) -> {
          JsonNode want = STRICT.readTree(doc);
          JsonNode got = STRICT.readTree(codec.apply(want));
          assertEquals(withoutDefaults(want), withoutDefaults(got));
        });
  }

  /**
   * This client's classes refuse every invalid vector, but those that vectors.json says only the
   * server checks (the Python suite sends each to the server).
   */
  @TestFactory
  List<DynamicTest> invalidVectorsAreRefused() throws IOException {
    return vectorTests(
        "invalid",
        (v, doc, codec) -> {
          if (!v.path("server_only").asText().isEmpty()) {
            assertEquals("INVALID_ARGUMENT", v.get("error").asText(), v.get("name").asText());
            return;
          }
          assertThrows(Exception.class, () -> codec.apply(STRICT.readTree(doc)));
        });
  }

  /** The client's actions are schema.json's, each with the body and answer it names. */
  @Test
  void actionsAreTheSchemas() throws IOException {
    JsonNode actions = schema().get("actions");
    List<String> names = new ArrayList<>();
    actions.fieldNames().forEachRemaining(names::add);
    assertEquals(names, Wire.ACTIONS.stream().map(Wire.Action::name).toList());
    for (Wire.Action<?, ?> a : Wire.ACTIONS) {
      JsonNode want = actions.get(a.name());
      assertEquals(want.get("body").asText(), "#/$defs/" + schemaName(a.body()), a.name());
      assertEquals(want.get("answer").asText(), "#/$defs/" + schemaName(a.answer()), a.name());
    }
  }

  @Test
  void systemColumnsAreTheSchemas() throws IOException {
    List<String> want = new ArrayList<>();
    schema().get("systemColumns").forEach(c -> want.add(c.asText()));
    assertEquals(want, SystemColumns.ALL);
  }

  /**
   * Every class this client sends or reads has only fields of its schema.json definition, and a
   * body it sends has every field the definition requires.
   */
  @Test
  void classesHaveTheSchemasFields() throws IOException {
    JsonNode defs = schema().get("$defs");
    Map<Class<?>, Boolean> classes = new java.util.LinkedHashMap<>(); // class → sent
    DOCUMENTS.values().forEach(c -> classes.put(c, false));
    for (Wire.Action<?, ?> a : Wire.ACTIONS) {
      classes.put(a.body(), true);
      classes.putIfAbsent(a.answer(), false);
    }
    classes.forEach(
        (cls, sent) -> {
          JsonNode def = defs.get(schemaName(cls));
          assertTrue(def != null, schemaName(cls) + " is not in schema.json");
          Set<String> props = new java.util.TreeSet<>();
          def.path("properties").fieldNames().forEachRemaining(props::add);
          Set<String> fields = jsonFields(cls);
          assertTrue(props.containsAll(fields), cls + ": " + fields + " not all in " + props);
          if (sent) {
            def.path("required")
                .forEach(r -> assertTrue(fields.contains(r.asText()), cls + " lacks " + r));
          }
        });
  }

  /** The JSON members of a class as the client writes it, unwrapped ones' in their place. */
  private static Set<String> jsonFields(Class<?> cls) {
    Set<String> out = new java.util.TreeSet<>();
    var config = Json.MAPPER.getSerializationConfig();
    for (var p : config.introspect(Json.MAPPER.constructType(cls)).findProperties()) {
      if (p.getAccessor() != null && p.getAccessor().hasAnnotation(JsonUnwrapped.class)) {
        out.addAll(jsonFields(p.getAccessor().getRawType()));
      } else {
        out.add(p.getName());
      }
    }
    return out;
  }

  private static JsonNode schema() throws IOException {
    return STRICT.readTree(read("../schema.json"));
  }

  /** What a test asserts of one vector's document, given its type's codec. */
  private interface VectorCheck {
    void check(JsonNode vector, byte[] doc, Function<JsonNode, byte[]> codec) throws Exception;
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
                Function<JsonNode, byte[]> codec = codec(v);
                if (codec == null) {
                  assertTrue(
                      index().path("opaque").has(type),
                      type + ": no class of this client, and vectors.json does not list it opaque");
                  return;
                }
                check.check(v, doc, codec);
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
    index().get(list).forEach(out::add);
    return out;
  }

  private static JsonNode index() throws IOException {
    return STRICT.readTree(read("vectors.json"));
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
