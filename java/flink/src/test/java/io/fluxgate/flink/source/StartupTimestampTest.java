package io.fluxgate.flink.source;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.ZoneId;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.table.api.ValidationException;
import org.junit.jupiter.api.Test;

public class StartupTimestampTest {
  @Test
  void epochMillisOrLocalTimeInTheSessionZone() {
    assertEquals(1678883047356L, StartupTimestamp.parse("1678883047356", ZoneId.of("UTC")));
    assertEquals(1702163352000L, StartupTimestamp.parse("2023-12-09 23:09:12", ZoneId.of("UTC")));
    assertEquals(
        1702163352000L - 8 * 3_600_000,
        StartupTimestamp.parse("2023-12-09 23:09:12", ZoneId.of("Asia/Shanghai")));
  }

  @Test
  void anythingElseIsNamed() {
    String message =
        assertThrows(
                ValidationException.class,
                () -> StartupTimestamp.parse("2023-12-09T23:09:12", ZoneId.of("UTC")))
            .getMessage();
    assertTrue(message.contains("'scan.startup.timestamp'"), message);
    assertTrue(message.contains("got '2023-12-09T23:09:12'"), message);
  }

  @Test
  void sessionZoneDefaultsToTheJvms() {
    Configuration session = new Configuration();
    assertEquals(ZoneId.systemDefault(), StartupTimestamp.sessionZone(session));
    session.setString("table.local-time-zone", "Asia/Shanghai");
    assertEquals(ZoneId.of("Asia/Shanghai"), StartupTimestamp.sessionZone(session));
  }
}
