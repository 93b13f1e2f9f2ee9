package io.fluxgate.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.ShadedJars;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The Spark jar relocates every class it bundles; Spark's own Arrow is not in it. */
class ShadedJarIT {
  @Test
  void everyBundledClassIsRelocated() throws Exception {
    Path jar = ShadedJars.packaged("fluxgate-spark", "shaded");
    assertTrue(Files.exists(jar), jar + " not packaged");
    assertEquals(List.of(), ShadedJars.unrelocatedClasses(jar, List.of()));
  }
}
