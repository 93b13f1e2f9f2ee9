package io.fluxgate.client;

import java.util.List;

/**
 * A grant of operations (read, write, create, drop, alter, describe) to a principal, on a database
 * ("*": every database) or one of its tables (null: the whole database): the body of grant and
 * revoke, and an item of list-grants.
 */
public record Grant(String principal, String database, String table, List<String> operations) {}
