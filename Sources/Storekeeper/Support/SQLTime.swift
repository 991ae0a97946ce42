/// Timestamps leave PostgreSQL as RFC 3339 UTC text, so the API never formats dates itself
/// and every response spells time the same way.
enum SQLTime {
  /// A select-list expression rendering `column` as `2026-11-29T13:26:31.123Z` (NULL stays NULL).
  static func rfc3339(_ column: String, as name: String? = nil) -> String {
    "to_char(\(column) AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') AS \(name ?? column)"
  }
}
