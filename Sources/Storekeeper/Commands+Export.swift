import Foundation
import Postgres
import StorekeeperAPI
import StorekeeperCore

extension Commands {
  static let exportUsage = """
    usage: storekeeper export orders|ledger|transactions --from TIME --to TIME [--format csv|jsonl]
                         [--page-size N]
      TIME is a date (YYYY-MM-DD, midnight UTC) or an RFC 3339 instant; rows from --from
      (included) to --to (excluded), streamed to standard output; N rows a query (default
      5,000, at most 100,000)
    """

  /// `storekeeper export`: orders (by creation), ledger rows (by when they were written) or the
  /// stores' transactions (by purchase) over a time range, as CSV or JSON lines on standard
  /// output, a keyset page at a time (`Exporter`), for the team's own warehouse. The count
  /// goes to standard error, so standard output is only the data.
  public static func export(_ arguments: [String]) async -> Int32 {
    func fail(_ message: String) -> Int32 {
      FileHandle.standardError.write(Data("\(message)\n\(exportUsage)\n".utf8))
      return 2
    }
    guard let name = arguments.first, let kind = ExportKind(rawValue: name) else {
      return fail("export: name orders, ledger or transactions")
    }
    var options: [String: String] = [:]
    var rest = arguments.dropFirst()
    while let flag = rest.first {
      rest = rest.dropFirst()
      guard ["--from", "--to", "--format", "--page-size"].contains(flag), let value = rest.first
      else {
        return fail("export: unknown or incomplete option \(flag)")
      }
      options[flag] = value
      rest = rest.dropFirst()
    }
    // In UTC, as the HTTP route hands them to PostgreSQL: a bare date cast by the session
    // would be midnight in the database's time zone, not UTC, and the bytes would differ.
    guard let from = options["--from"].flatMap(ExportParameters.utc),
      let to = options["--to"].flatMap(ExportParameters.utc)
    else {
      return fail(
        "export: --from and --to are required, each a date or an RFC 3339 instant with its zone")
    }
    guard let format = ExportFormat(rawValue: options["--format"] ?? "csv") else {
      return fail("export: --format is csv or jsonl")
    }
    let pageSize = options["--page-size"].map { Int($0) ?? 0 } ?? Exporter.pageSize
    guard (1...100_000).contains(pageSize) else {
      return fail("export: --page-size is 1 to 100000")
    }
    guard let url = commandDatabaseURL() else { return 2 }
    let pool = commandPool(url: url, logger: logger(.notice))
    let out = FileHandle.standardOutput
    do {
      if let header = Exporter.header(kind, format) { out.write(Data((header + "\n").utf8)) }
      let count = try await Exporter(database: pool).export(
        kind, format: format, from: from, to: to, pageSize: pageSize
      ) { lines in
        for line in lines { out.write(Data((line + "\n").utf8)) }
      }
      FileHandle.standardError.write(Data("export: \(count) \(kind.rawValue) row(s)\n".utf8))
      await pool.shutdown()
      return 0
    } catch {
      FileHandle.standardError.write(Data("export failed: \(failure(error))\n".utf8))
      await pool.shutdown()
      return 1
    }
  }
}
