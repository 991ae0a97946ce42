/// Timestamps leave PostgreSQL as RFC 3339 UTC text, so the API never formats dates itself
/// and every response spells time the same way.
enum SQLTime {
  /// The `to_char` pattern of every timestamp the API writes.
  private static let format = "'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"'"

  /// An expression rendering `column` as `2026-11-29T13:26:31.123Z` (NULL stays NULL).
  static func text(_ column: String) -> String {
    "to_char(\(column) AT TIME ZONE 'UTC', \(format))"
  }

  /// `text(column)` as a select-list item named `name` (default: the column's name).
  static func rfc3339(_ column: String, as name: String? = nil) -> String {
    "\(text(column)) AS \(name ?? column)"
  }
}
