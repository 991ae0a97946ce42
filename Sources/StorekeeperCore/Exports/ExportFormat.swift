/// How `storekeeper export` spells a row: RFC 4180 CSV (a header, every field quoted, NULL as
/// an empty unquoted field) or JSON lines (one object a line, NULL as null, every value a
/// string as PostgreSQL wrote it, so amounts stay exact decimals).
package enum ExportFormat: String, Sendable, CaseIterable {
  case csv, jsonl
}
