import Foundation
import Testing

@testable import Postgres

/// Arrays go to the server as one parameter and come back element for element, whatever the
/// elements hold.
@Suite(.database) struct PostgresArrayTests {
  @Test func textElementsSurviveQuotesBackslashesCommasBracesAndNull() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      let values: [String?] = [
        "plain", "", "with \"quotes\"", #"back\slash"#, "a,b", "{braces}", "NULL", nil,
        "héllo 🌍", " spaced ", #"'); DROP TABLE x; --"#,
      ]
      let rows = try await pool.query(
        """
        SELECT v, v IS NULL AS missing FROM unnest(\(PostgresArray(values))::text[])
          WITH ORDINALITY AS a(v, n) ORDER BY n
        """)
      #expect(rows.count == values.count)
      for (row, value) in zip(rows, values) {
        #expect(try row.decodeIfPresent("v", as: String.self) == value)
        #expect(try row.decode("missing", as: Bool.self) == (value == nil))
      }
    }
  }

  @Test func integersAndByteaAndAnEmptyArray() async throws {
    try await withTestDatabase { db in
      let pool = db.makePool()
      defer { Task { await pool.shutdown() } }
      let numbers: [Int32] = [1, -7, Int32.max]
      let blobs: [[UInt8]] = [[], [0, 34, 92, 255], Array("{\"a\":1}".utf8)]
      let rows = try await pool.query(
        """
        SELECT n, b FROM unnest(\(PostgresArray(numbers))::int[], \(PostgresArray(bytea: blobs))::bytea[])
          WITH ORDINALITY AS a(n, b, i) ORDER BY i
        """)
      #expect(try rows.map { try $0.decode("n", as: Int32.self) } == numbers)
      #expect(try rows.map { try $0.decode("b", as: [UInt8].self) } == blobs)
      let empty = try await pool.query(
        "SELECT count(*) AS n FROM unnest(\(PostgresArray([String]()))::text[])")
      #expect(try empty.first?.decode("n", as: Int.self) == 0)
    }
  }
}
