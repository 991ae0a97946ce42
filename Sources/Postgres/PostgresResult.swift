import CPostgres

/// Owns a `PGresult` for as long as it takes to copy its rows into Swift values.
final class PostgresResult {
  let handle: OpaquePointer

  init(_ handle: OpaquePointer) {
    self.handle = handle
  }

  deinit {
    PQclear(handle)
  }

  var status: ExecStatusType { PQresultStatus(handle) }

  var isSuccess: Bool {
    let s = status
    return s == PGRES_COMMAND_OK || s == PGRES_TUPLES_OK || s == PGRES_EMPTY_QUERY
  }

  /// Rows touched by INSERT/UPDATE/DELETE/SELECT…; 0 when the command reports none.
  var affectedRows: Int {
    guard let text = PQcmdTuples(handle) else { return 0 }
    return Int(String(cString: text)) ?? 0
  }

  func rows() -> [PostgresRow] {
    let rowCount = Int(PQntuples(handle))
    let columnCount = Int(PQnfields(handle))
    var names = [String]()
    names.reserveCapacity(columnCount)
    for c in 0..<columnCount {
      names.append(PQfname(handle, Int32(c)).map { String(cString: $0) } ?? "?column?")
    }
    let description = PostgresRowDescription(names: names)
    var rows = [PostgresRow]()
    rows.reserveCapacity(rowCount)
    for r in 0..<rowCount {
      var values = [String?]()
      values.reserveCapacity(columnCount)
      for c in 0..<columnCount {
        let (row, column) = (Int32(r), Int32(c))
        if PQgetisnull(handle, row, column) != 0 {
          values.append(nil)
        } else if let bytes = PQgetvalue(handle, row, column) {
          let length = Int(PQgetlength(handle, row, column))
          let buffer = UnsafeRawBufferPointer(start: bytes, count: length)
          values.append(String(decoding: buffer, as: UTF8.self))
        } else {
          values.append(nil)
        }
      }
      rows.append(PostgresRow(description: description, values: values))
    }
    return rows
  }

  /// The server's error fields, or nil when the result carries no SQLSTATE.
  func serverError() -> PostgresError? {
    guard let sqlState = field(DiagnosticField.sqlState) else { return nil }
    let message =
      field(DiagnosticField.messagePrimary)
      ?? PQresultErrorMessage(handle).map { String(cString: $0) } ?? "unknown error"
    return PostgresError(
      kind: .server, sqlState: sqlState, message: message, detail: field(DiagnosticField.detail),
      constraint: field(DiagnosticField.constraint), table: field(DiagnosticField.table),
      column: field(DiagnosticField.column), hint: field(DiagnosticField.hint))
  }

  private func field(_ code: Int32) -> String? {
    PQresultErrorField(handle, code).map { String(cString: $0) }
  }
}

/// libpq's `PG_DIAG_*` codes are character macros, which Swift does not import.
private enum DiagnosticField {
  static let sqlState = Int32(UInt8(ascii: "C"))
  static let messagePrimary = Int32(UInt8(ascii: "M"))
  static let detail = Int32(UInt8(ascii: "D"))
  static let hint = Int32(UInt8(ascii: "H"))
  static let table = Int32(UInt8(ascii: "t"))
  static let column = Int32(UInt8(ascii: "c"))
  static let constraint = Int32(UInt8(ascii: "n"))
}
