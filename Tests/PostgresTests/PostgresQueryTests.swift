import Foundation
import Testing

@testable import Postgres

@Suite struct PostgresQueryTests {
  @Test func interpolatedValuesBecomePlaceholdersNeverText() {
    let name = "Robert'); DROP TABLE students;--"
    let query: PostgresQuery = "SELECT * FROM t WHERE name = \(name) AND n = \(42)"
    #expect(query.sql == "SELECT * FROM t WHERE name = $1 AND n = $2")
    #expect(query.binds == [name, "42"])
  }

  @Test func optionalNilBindsNull() {
    let missing: String? = nil
    let query: PostgresQuery = "SELECT \(missing), \(Optional("x"))"
    #expect(query.sql == "SELECT $1, $2")
    #expect(query.binds == [nil, "x"])
  }

  @Test func unescapedFragmentsAreInsertedAsIs() {
    let query: PostgresQuery = "SELECT * FROM t \(unescaped: "ORDER BY created_at") LIMIT \(5)"
    #expect(query.sql == "SELECT * FROM t ORDER BY created_at LIMIT $1")
    #expect(query.binds == ["5"])
  }

  @Test func appendRenumbersTheOtherQuerysPlaceholders() {
    var query: PostgresQuery = "SELECT * FROM t WHERE a = \(1)"
    query.append(" AND b = \("two") AND c = \(3)")
    #expect(query.sql == "SELECT * FROM t WHERE a = $1 AND b = $2 AND c = $3")
    #expect(query.binds == ["1", "two", "3"])
  }

  @Test func embeddedQueryIsRenumbered() {
    let filter: PostgresQuery = "b = \("x")"
    let query: PostgresQuery = "SELECT \(1) WHERE \(filter) AND c = \(2)"
    #expect(query.sql == "SELECT $1 WHERE b = $2 AND c = $3")
    #expect(query.binds == ["1", "x", "2"])
  }

  @Test func renumberingLeavesLiteralsCommentsAndDollarQuotesAlone() {
    let sql = """
      SELECT $1, '$1 it''s', E'\\'$1', "$1col", $$ $1 $$, $fn$ $2 $fn$ -- $1
      /* $1 /* nested $2 */ $1 */ , $2, x$1
      """
    let renumbered = PostgresPlaceholders.renumber(sql, offset: 10)
    #expect(
      renumbered == """
        SELECT $11, '$1 it''s', E'\\'$1', "$1col", $$ $1 $$, $fn$ $2 $fn$ -- $1
        /* $1 /* nested $2 */ $1 */ , $12, x$1
        """)
  }

  @Test func plusConcatenates() {
    let query: PostgresQuery = "SELECT \(1)" + " + \(2)"
    #expect(query.sql == "SELECT $1 + $2")
    #expect(query.binds == ["1", "2"])
  }
}
