package io.fluxgate.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.ClientInterceptor;
import io.grpc.ForwardingClientCall;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;

/** Adds "authorization: Bearer ..." to every call once a token is known. */
final class BearerAuth implements ClientInterceptor {
  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private volatile String header;

  /** Sets the full header value, "Bearer &lt;token&gt;". */
  void set(String header) {
    this.header = header;
  }

  @Override
  public <Q, R> ClientCall<Q, R> interceptCall(
      MethodDescriptor<Q, R> method, CallOptions options, Channel next) {
    String value = header;
    ClientCall<Q, R> call = next.newCall(method, options);
    if (value == null) {
      return call;
    }
    return new ForwardingClientCall.SimpleForwardingClientCall<>(call) {
      @Override
      public void start(Listener<R> listener, Metadata headers) {
        headers.put(AUTHORIZATION, value);
        super.start(listener, headers);
      }
    };
  }
}
