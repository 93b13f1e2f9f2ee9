package io.fluxgate.client;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/** What the connectors' shaded jars hold, for the tests that check them (ShadedJarIT). */
public final class ShadedJars {
  private ShadedJars() {}

  /**
   * The classes of jar outside io/fluxgate/ and META-INF/ whose names start with none of the
   * allowed prefixes: classes its relocations missed.
   */
  public static List<String> unrelocatedClasses(Path jar, List<String> allowed) throws IOException {
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      return Collections.list(zip.entries()).stream()
          .map(ZipEntry::getName)
          .filter(n -> n.endsWith(".class"))
          .filter(n -> !n.startsWith("io/fluxgate/") && !n.startsWith("META-INF/"))
          .filter(n -> allowed.stream().noneMatch(n::startsWith))
          .sorted()
          .toList();
    }
  }

  /** The jar a module's build packaged: target/ARTIFACT-VERSION.jar, or -CLASSIFIER.jar. */
  public static Path packaged(String artifact, String classifier) {
    String version = System.getProperty("project.version");
    String suffix = classifier == null ? "" : "-" + classifier;
    return Path.of("target", artifact + "-" + version + suffix + ".jar");
  }
}
