package io.fluxgate.client;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * The JSON of the protocol's bodies, commands and app_metadata. Field names are snake_case as in
 * PROTOCOL.md. The server rejects unknown fields, so empty optional fields are left out; what the
 * server sends may carry fields this client does not know, which are ignored so that an older
 * client keeps working against a newer server.
 */
final class Json {
  static final ObjectMapper MAPPER =
      new ObjectMapper()
          .setPropertyNamingStrategy(PropertyNamingStrategies.SNAKE_CASE)
          .setSerializationInclusion(JsonInclude.Include.NON_EMPTY)
          .configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

  private Json() {}

  static byte[] encode(Object value) {
    try {
      return MAPPER.writeValueAsBytes(value);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException(
          "encode " + value.getClass().getSimpleName() + ": " + e.getMessage(), e);
    }
  }

  static <T> T decode(byte[] json, Class<T> type, String what) {
    try {
      return MAPPER.readValue(json, type);
    } catch (IOException e) {
      throw new FluxgateException(
          io.grpc.Status.Code.INTERNAL, what + " " + truncate(json) + ": " + e.getMessage(), e);
    }
  }

  /** An object {key: value}, the shape of every command: {"scan": ...}, {"write": ...}. */
  static byte[] command(String key, Object value) {
    ObjectNode node = MAPPER.createObjectNode();
    node.set(key, MAPPER.valueToTree(value));
    return encode(node);
  }

  static JsonNode parse(String json) {
    try {
      return MAPPER.readTree(json);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("not JSON: " + e.getOriginalMessage(), e);
    }
  }

  static String truncate(byte[] b) {
    String s = new String(b, StandardCharsets.UTF_8);
    return s.length() > 200 ? s.substring(0, 200) + "..." : s;
  }
}
