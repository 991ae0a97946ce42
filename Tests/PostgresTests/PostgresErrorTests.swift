import Foundation
import Testing

@testable import Postgres

@Suite(.database) struct PostgresErrorTests {
  @Test func uniqueViolationKeepsSQLStateConstraintAndTable() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      try await pool.execute(
        "CREATE TABLE widgets (name text NOT NULL, CONSTRAINT widgets_name_key UNIQUE (name))")
      try await pool.execute("INSERT INTO widgets (name) VALUES (\("secret-value"))")
      let error = try await #require(throws: PostgresError.self) {
        try await pool.execute("INSERT INTO widgets (name) VALUES (\("secret-value"))")
      }
      #expect(error.kind == .server)
      #expect(error.sqlState == PostgresError.uniqueViolation)
      #expect(error.constraint == "widgets_name_key")
      #expect(error.table == "widgets")
      #expect(error.detail?.contains("secret-value") == true)
      #expect(!error.isUnavailable)
      // The generic description carries neither the SQL nor the values.
      #expect(!error.description.contains("secret-value"))
      #expect(!error.description.contains("INSERT"))
      #expect(error.logMetadata["pg_constraint"] != nil)
    }
  }

  @Test func syntaxErrorIsAServerErrorAndTheSessionSurvives() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool(maxConnections: 1)
      defer { Task { await pool.shutdown() } }
      let error = try await #require(throws: PostgresError.self) {
        try await pool.query("SELEC 1")
      }
      #expect(error.sqlState == "42601")
      let pid = try await pool.query("SELECT pg_backend_pid() AS pid").first?.decode(
        "pid", as: Int.self)
      let again = try await pool.query("SELECT pg_backend_pid() AS pid").first?.decode(
        "pid", as: Int.self)
      #expect(pid == again)
    }
  }

  @Test func nullIsADifferentDecodingErrorFromABadValue() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      let row = try #require(
        try await pool.query("SELECT NULL::int AS missing, 'abc' AS word, 'x' AS dup, 'y' AS dup")
          .first)
      let null = try #require(throws: PostgresError.self) {
        try row.decode("missing", as: Int.self)
      }
      #expect(null.kind == .decoding)
      #expect(null.decodingProblem == .unexpectedNull)
      #expect(null.column == "missing")
      #expect(try row.decodeIfPresent("missing", as: Int.self) == nil)

      let bad = try #require(throws: PostgresError.self) { try row.decode("word", as: Int.self) }
      #expect(bad.kind == .decoding)
      #expect(bad.decodingProblem == .badValue(type: "Int"))
      let badOptional = try #require(throws: PostgresError.self) {
        try row.decodeIfPresent("word", as: UUID.self)
      }
      #expect(badOptional.decodingProblem == .badValue(type: "UUID"))

      let absent = try #require(throws: PostgresError.self) {
        try row.decode("nope", as: String.self)
      }
      #expect(absent.decodingProblem == .noSuchColumn)
      #expect(row.columns == ["missing", "word", "dup", "dup"])
      #expect(try row.decode("dup", as: String.self) == "x")
    }
  }

  @Test func unavailabilityFollowsKindAndSQLState() {
    #expect(PostgresError(kind: .connection, message: "").isUnavailable)
    #expect(PostgresError(kind: .poolTimeout, message: "").isUnavailable)
    #expect(PostgresError(kind: .closed, message: "").isUnavailable)
    #expect(PostgresError(kind: .server, sqlState: "08006", message: "").isUnavailable)
    #expect(PostgresError(kind: .server, sqlState: "57P01", message: "").isUnavailable)
    #expect(PostgresError(kind: .server, sqlState: "57P03", message: "").isUnavailable)
    #expect(!PostgresError(kind: .server, sqlState: "57014", message: "").isUnavailable)
    #expect(!PostgresError(kind: .server, sqlState: "23505", message: "").isUnavailable)
    #expect(!PostgresError(kind: .decoding, message: "").isUnavailable)
  }

  /// What background work that must not be lost leaves pending (`isTransient`) and what it
  /// keeps as failed: a refusal for a state of the server that passes against one that doing
  /// the same work again would only repeat.
  @Test func transienceFollowsKindAndSQLState() {
    func server(_ state: String, _ message: String = "") -> PostgresError {
      PostgresError(kind: .server, sqlState: state, message: message)
    }
    for state in [
      "55P03", "57014", "25P03", "25006", "53000", "53100", "53200", "53300", "58000", "58030",
      "26000",
    ] {
      #expect(server(state).isTransientRefusal, "\(state)")
      #expect(server(state).isTransient, "\(state)")
      #expect(!server(state).isUnavailable, "\(state)")
    }
    #expect(server("0A000", "cached plan must not change result type").isTransientRefusal)
    for state in ["40001", "40P01", "08006", "57P01", "57P02", "57P03"] {
      #expect(!server(state).isTransientRefusal, "\(state)")
      #expect(server(state).isTransient, "\(state)")
    }
    for kind in [PostgresError.Kind.connection, .poolTimeout, .closed] {
      #expect(PostgresError(kind: kind, message: "").isTransient)
    }
    // Doing the same work again would only meet the same refusal.
    for state in [
      "23505", "23503", "23514", "23502", "22021", "22P02", "42P01", "42703", "53400",
      "P0001", "XX000", "57P04",
    ] {
      #expect(!server(state).isTransient, "\(state)")
    }
    #expect(!server("0A000", "unsupported feature").isTransient)
    #expect(!PostgresError(kind: .decoding, message: "").isTransient)
    #expect(!PostgresError(kind: .server, message: "no SQLSTATE").isTransient)
  }

  /// A foreign key refusal is retried a bounded number of times, as a lost conflict (a row
  /// deleted under the statement), never left pending without bound as a passing refusal.
  @Test func aForeignKeyViolationIsToldApartButIsNotTransient() {
    let refused = PostgresError(kind: .server, sqlState: "23503", message: "")
    #expect(refused.isForeignKeyViolation)
    #expect(!refused.isTransient)
    #expect(!PostgresError(kind: .server, sqlState: "23505", message: "").isForeignKeyViolation)
    #expect(!PostgresError(kind: .connection, sqlState: "23503", message: "").isForeignKeyViolation)
  }
}
