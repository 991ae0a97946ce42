import Postgres

/// Streams one kind of row over a time range, a keyset page at a time: each page's lines are
/// handed to `write` (which may wait: an HTTP client reading slowly) before the next page is
/// read, so memory holds one page whatever the size, and a `write` that throws (the client
/// went) ends the export there.
/// Every line is built by PostgreSQL (`format`'s quoting there), so the bytes do not depend on
/// Swift's number or date formatting.
package struct Exporter: Sendable {
  let database: PostgresPool
  package static let pageSize = 5_000

  package init(database: PostgresPool) {
    self.database = database
  }

  /// The header line CSV starts with (none for JSON lines).
  package static func header(_ kind: ExportKind, _ format: ExportFormat) -> String? {
    format == .csv ? kind.columns.joined(separator: ",") : nil
  }

  /// The expression of one row's line.
  static func line(_ kind: ExportKind, _ format: ExportFormat) -> String {
    switch format {
    case .csv:
      // A text cell a spreadsheet would take for a formula (user ids are the client's to
      // choose: `=HYPERLINK(…)`) is prefixed with an apostrophe, as OWASP advises: quoting
      // alone does not stop Excel or LibreOffice. Numbers keep their sign.
      return zip(kind.columns, kind.expressions).map { column, expression in
        let text =
          kind.numericColumns.contains(column)
          ? expression
          : "(CASE WHEN left(\(expression), 1) IN ('=', '+', '-', '@', E'\\t', E'\\r') "
            + "THEN '''' || \(expression) ELSE \(expression) END)"
        return "coalesce('\"' || replace(\(text), '\"', '\"\"') || '\"', '')"
      }.joined(separator: " || ',' || ")
    case .jsonl:
      let pairs = zip(kind.columns, kind.expressions).map { "'\($0)', \($1)" }
      return "json_build_object(\(pairs.joined(separator: ", ")))::text"
    }
  }

  /// Rows whose time is in [`from`, `to`) (RFC 3339 or dates, read by PostgreSQL as UTC unless
  /// they say otherwise), part after part (`ExportKind.keyedParts`), each in key order, a page's
  /// lines at a time; returns how many were written.
  package func export(
    _ kind: ExportKind, format: ExportFormat, from: String, to: String, pageSize: Int = pageSize,
    write: ([String]) async throws -> Void
  ) async throws -> Int {
    guard let parts = kind.keyedParts else {
      return try await exportDirectly(
        kind, format: format, from: from, to: to, pageSize: pageSize, write: write)
    }
    var written = 0
    for part in parts {
      written += try await export(
        kind, part: part, format: format, from: from, to: to, pageSize: pageSize, write: write)
    }
    return written
  }

  /// One store's rows, a page at a time: the page's last key is found in the store's own table
  /// on its (time, key) index, then the page is read from the source between the previous
  /// page's last key and this one's, a range its legs' indexes serve (joined on the keys, the
  /// UNION ALL would be read whole for every page).
  private func export(
    _ kind: ExportKind, part: ExportKind.KeyedPart, format: ExportFormat, from: String,
    to: String, pageSize: Int, write: ([String]) async throws -> Void
  ) async throws -> Int {
    let microseconds = "(timestamptz 'epoch' + $1::bigint * interval '1 microsecond')"
    // The rows after `after` and up to `upTo` (both keys: microseconds, key), within the range.
    func between(
      _ time: String, _ key: String, after: (String, String)?, upTo: (String, String)?
    ) -> PostgresQuery {
      var query: PostgresQuery = """
         AND \(unescaped: time) >= (\(from)::text)::timestamptz
         AND \(unescaped: time) < (\(to)::text)::timestamptz
        """
      for (bound, comparison, leading) in [(after, ">", ">="), (upTo, "<=", "<=")] {
        guard let (instant, id) = bound else { continue }
        // The leading column alone too: what the index seeks to.
        query.append(PostgresQuery(unsafeSQL: " AND (\(time), \(key)) \(comparison) ("))
        query.append(PostgresQuery(unsafeSQL: microseconds, binds: [instant]))
        query.append(", \(id)::text) AND \(unescaped: time) \(unescaped: leading) ")
        query.append(PostgresQuery(unsafeSQL: microseconds, binds: [instant]))
      }
      return query
    }
    var after: (String, String)? = nil
    var written = 0
    while true {
      var last = PostgresQuery(
        unsafeSQL: """
          SELECT (extract(epoch FROM \(part.time)) * 1000000)::bigint::text AS d,
                 \(part.key) AS id
          FROM \(part.table) WHERE \(part.filter)
          """)
      last.append(between(part.time, part.key, after: after, upTo: nil))
      last.append(
        PostgresQuery(
          unsafeSQL: " ORDER BY \(part.time), \(part.key) OFFSET \(pageSize - 1) LIMIT 1"))
      let upTo = try await database.query(last).first.map {
        (try $0.decode("d", as: String.self), try $0.decode("id", as: String.self))
      }
      var page = PostgresQuery(
        unsafeSQL: """
          SELECT \(Self.line(kind, format)) AS line FROM \(kind.source.table) x
          WHERE x.store = '\(part.store)'
          """)
      page.append(between("x.purchase_date", "x.export_key", after: after, upTo: upTo))
      page.append(" ORDER BY x.purchase_date, x.export_key")
      let rows = try await database.query(page)
      try await write(try rows.map { try $0.decode("line") })
      written += rows.count
      // Without a page's last key, fewer than a page were left: this was the last.
      guard let upTo else { return written }
      after = upTo
    }
  }

  /// A source read in its keyset's order on its own index.
  private func exportDirectly(
    _ kind: ExportKind, format: ExportFormat, from: String, to: String,
    pageSize: Int, write: ([String]) async throws -> Void
  ) async throws -> Int {
    let source = kind.source
    let keys = kind.keyset
    let selected = keys.enumerated().map { "\($1.select) AS k\($0)" }.joined(separator: ", ")
    var after: [String?]? = nil
    var written = 0
    while true {
      var query = PostgresQuery(
        unsafeSQL: "SELECT \(Self.line(kind, format)) AS line, \(selected) FROM \(source.table) x ")
      query.append(
        """
        WHERE x.\(unescaped: source.time) >= (\(from)::text)::timestamptz
          AND x.\(unescaped: source.time) < (\(to)::text)::timestamptz
        """)
      if let after {
        // The row-wise comparison is the keyset: strictly after the last row written.
        query.append(
          PostgresQuery(unsafeSQL: " AND (\(keys.map(\.column).joined(separator: ", "))) > ("))
        for (index, value) in after.enumerated() {
          if index > 0 { query.append(", ") }
          query.append(
            PostgresQuery(
              unsafeSQL: keys[index].bound, binds: [value]))
        }
        query.append(")")
        if keys.count > 1 {
          // The leading column alone, which its index can seek to.
          query.append(PostgresQuery(unsafeSQL: " AND \(keys[0].column) >= "))
          query.append(PostgresQuery(unsafeSQL: keys[0].bound, binds: [after[0]]))
        }
      }
      query.append(
        PostgresQuery(
          unsafeSQL:
            " ORDER BY \(keys.map(\.column).joined(separator: ", ")) LIMIT \(pageSize)"))
      let rows = try await database.query(query)
      try await write(try rows.map { try $0.decode("line") })
      written += rows.count
      guard rows.count == pageSize, let last = rows.last else { return written }
      after = try keys.indices.map { try last.decodeIfPresent("k\($0)") }
    }
  }
}
