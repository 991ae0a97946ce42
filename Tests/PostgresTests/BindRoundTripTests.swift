import Foundation
import Testing

@testable import Postgres

/// Every bindable type goes to the server and comes back unchanged.
@Suite(.database) struct BindRoundTripTests {
  func roundTrip<T: PostgresEncodable & PostgresDecodable>(
    _ value: T, cast: String, on pool: PostgresPool
  ) async throws -> T? {
    var query: PostgresQuery = "SELECT \(value)"
    query.append(PostgresQuery(unsafeSQL: "::\(cast) AS v"))
    let rows = try await pool.query(query)
    return try #require(rows.first).decodeIfPresent("v", as: T.self)
  }

  @Test func everyTypeRoundTrips() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      for value in ["", "plain", "héllo 🌍 ñ 中文 \u{1F600}", "tab\tnew\nline"] {
        #expect(try await roundTrip(value, cast: "text", on: pool) == value)
      }
      for value in [0, 1, -1, Int.max, Int.min] {
        #expect(try await roundTrip(value, cast: "int8", on: pool) == value)
      }
      for value in [Int32.max, Int32.min, 7] {
        #expect(try await roundTrip(value, cast: "int4", on: pool) == value)
      }
      for value in [Int64.max, Int64.min] {
        #expect(try await roundTrip(value, cast: "int8", on: pool) == value)
      }
      #expect(try await roundTrip(true, cast: "bool", on: pool) == true)
      #expect(try await roundTrip(false, cast: "bool", on: pool) == false)
      let uuid = UUID()
      #expect(try await roundTrip(uuid, cast: "uuid", on: pool) == uuid)
      let date = Date(timeIntervalSince1970: 1795958791.123456)
      let back = try #require(try await roundTrip(date, cast: "timestamptz", on: pool))
      #expect(abs(back.timeIntervalSince(date)) < 0.000_001)
      let bytes: [UInt8] = Array(0...255) + [0, 0, 255]
      #expect(try await roundTrip(bytes, cast: "bytea", on: pool) == bytes)
      #expect(try await roundTrip([UInt8](), cast: "bytea", on: pool) == [])
    }
  }

  @Test func nilBindsSQLNull() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      let missing: Int? = nil
      let rows = try await pool.query(
        "SELECT \(missing)::int8 IS NULL AS is_null, \(missing)::int8 AS v")
      let row = try #require(rows.first)
      #expect(try row.decode("is_null", as: Bool.self))
      #expect(try row.decodeIfPresent("v", as: Int.self) == nil)
      #expect(row.isNull("v"))
    }
  }

  @Test func injectionAttemptStaysData() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      try await pool.execute("CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)")
      let evil = #"'); DROP TABLE notes; -- $1 $2 "x" \' ;; $$ E'\\' ' OR '1'='1"#
      try await pool.execute("INSERT INTO notes (body) VALUES (\(evil))")
      let rows = try await pool.query("SELECT body FROM notes WHERE body = \(evil)")
      #expect(rows.count == 1)
      #expect(try rows.first?.decode("body", as: String.self) == evil)
      let count = try await pool.query("SELECT count(*) AS n FROM notes")
      #expect(try count.first?.decode("n", as: Int.self) == 1)
    }
  }

  @Test func moneyTravelsAsDecimalTextAndNumeric() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      let rows = try await pool.query("SELECT (\("6.00")::numeric * 3 + 0.01)::text AS total")
      #expect(try rows.first?.decode("total", as: String.self) == "18.01")
    }
  }

  @Test func doublesDecodeForStatistics() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      let rows = try await pool.query(
        "SELECT 1.5::float8 AS a, 'NaN'::float8 AS b, '-Infinity'::float8 AS c, 1e300::float8 AS d")
      let row = try #require(rows.first)
      #expect(try row.decode("a", as: Double.self) == 1.5)
      #expect(try row.decode("b", as: Double.self).isNaN)
      #expect(try row.decode("c", as: Double.self) == -.infinity)
      #expect(try row.decode("d", as: Double.self) == 1e300)
    }
  }

  @Test func affectedRowCountIsReturned() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      try await pool.execute("CREATE TABLE t (n int)")
      #expect(try await pool.execute("INSERT INTO t SELECT generate_series(1, 5)") == 5)
      #expect(try await pool.execute("UPDATE t SET n = n + 1 WHERE n > \(2)") == 3)
      #expect(try await pool.execute("CREATE INDEX ON t (n)") == 0)
    }
  }

  @Test func aStringWithNULIsRefusedNotTruncated() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      let error = try await #require(throws: PostgresError.self) {
        try await pool.query("SELECT \("a\u{0}b")::text AS v")
      }
      #expect(error.sqlState == PostgresError.characterNotInRepertoire)
      // The session is still usable afterwards.
      #expect(try await pool.query("SELECT 1 AS v").first?.decode("v", as: Int.self) == 1)
    }
  }
}
