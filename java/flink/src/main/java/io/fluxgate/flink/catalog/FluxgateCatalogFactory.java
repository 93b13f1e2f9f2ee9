package io.fluxgate.flink.catalog;

import io.fluxgate.flink.FluxgateOptions;
import java.util.HashSet;
import java.util.Set;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.table.catalog.Catalog;
import org.apache.flink.table.factories.CatalogFactory;
import org.apache.flink.table.factories.FactoryUtil;

/** {@code CREATE CATALOG fg WITH ('type'='fluxgate', 'endpoint'='grpc://127.0.0.1:8815')}. */
public final class FluxgateCatalogFactory implements CatalogFactory {
  @Override
  public String factoryIdentifier() {
    return FluxgateOptions.IDENTIFIER;
  }

  @Override
  public Set<ConfigOption<?>> requiredOptions() {
    return Set.of(FluxgateOptions.ENDPOINT);
  }

  @Override
  public Set<ConfigOption<?>> optionalOptions() {
    Set<ConfigOption<?>> options = new HashSet<>(FluxgateOptions.CONNECTION);
    options.remove(FluxgateOptions.ENDPOINT);
    return options;
  }

  @Override
  public Catalog createCatalog(Context context) {
    FactoryUtil.CatalogFactoryHelper helper = FactoryUtil.createCatalogFactoryHelper(this, context);
    helper.validate(); // an unknown option is a ValidationException naming it
    return new FluxgateCatalog(
        context.getName(),
        helper.getOptions().get(FluxgateOptions.DEFAULT_DATABASE),
        FluxgateOptions.connection(helper.getOptions()));
  }
}
