package io.fluxgate.spark;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;

/** The catalog's namespaces are the server's databases. */
class NamespaceTest extends SparkServerTest {
  private static List<String> namespaces() {
    return spark.sql("SHOW NAMESPACES IN fg").collectAsList().stream()
        .map((Row r) -> r.getString(0))
        .toList();
  }

  @Test
  void namespacesAreDatabases() {
    assertTrue(namespaces().contains("fluss"), namespaces().toString());
    spark.sql("CREATE NAMESPACE fg.spark_made");
    assertTrue(client.listDatabases().contains("spark_made"));
    assertTrue(namespaces().contains("spark_made"), namespaces().toString());
    spark.sql("CREATE TABLE fg.spark_made.t (id BIGINT)");
    Exception notEmpty =
        assertThrows(Exception.class, () -> spark.sql("DROP NAMESPACE fg.spark_made"));
    assertTrue(messages(notEmpty).contains("spark_made"), messages(notEmpty));
    spark.sql("DROP NAMESPACE fg.spark_made CASCADE");
    assertFalse(namespaces().contains("spark_made"), namespaces().toString());
  }
}
