package io.fluxgate.flink;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fluxgate.client.ShadedJars;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The Flink jar relocates every class it bundles, so that none meets Flink's or a job's. */
public class ShadedJarIT {
  @Test
  void everyBundledClassIsRelocated() throws Exception {
    Path jar = ShadedJars.packaged("fluxgate-flink", null);
    assertTrue(Files.exists(jar), jar + " not packaged");
    // zstd-jni's native methods are bound by its class names: it cannot be relocated (as in
    // Fluss's jars). Everything else is under io.fluxgate.shaded.
    assertEquals(List.of(), ShadedJars.unrelocatedClasses(jar, List.of("com/github/luben/zstd/")));
  }
}
