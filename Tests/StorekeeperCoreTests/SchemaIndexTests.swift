import Postgres
import StorekeeperTestSupport
import Testing

/// The schema every migration builds, read back from the catalogue.
@Suite(.database) struct SchemaIndexTests {
  /// An index identical to another (same table, columns, operator classes, collations and
  /// orderings, predicate, expressions and uniqueness) serves no query the other does not, and
  /// every write to its table pays for it again (0133 built such a copy of 0120's index; 0135
  /// drops it).
  @Test func noTwoIndexesOfATableHaveTheSameDefinition() async throws {
    try await DomainHarness.with { h in
      let duplicates = try await h.database.query(
        """
        SELECT i.indrelid::regclass::text AS table_name,
               string_agg(i.indexrelid::regclass::text, ', '
                          ORDER BY i.indexrelid::regclass::text) AS indexes
        FROM pg_index i
        JOIN pg_class t ON t.oid = i.indrelid
        JOIN pg_namespace n ON n.oid = t.relnamespace
        WHERE n.nspname = current_schema()
        GROUP BY i.indrelid, i.indkey::text, i.indclass::text, i.indcollation::text,
                 i.indoption::text, coalesce(pg_get_expr(i.indpred, i.indrelid), ''),
                 coalesce(pg_get_expr(i.indexprs, i.indrelid), ''), i.indisunique
        HAVING count(*) > 1
        ORDER BY 1, 2
        """)
      let found = try duplicates.map {
        "\(try $0.decode("table_name", as: String.self)): "
          + (try $0.decode("indexes", as: String.self))
      }
      #expect(found.isEmpty, "indexes with the same definition: \(found)")
    }
  }
}
