package io.fluxgate.client;

/** The app_metadata of one lookup answer: keys in the request batch, rows in the answer. */
public record LookupMeta(int keys, int rows) {}
