/// Why migrations stopped start-up; each case names the file to look at.
public enum MigrationError: Error, CustomStringConvertible {
  /// An applied migration's file no longer matches the checksum recorded when it ran.
  case checksumMismatch(file: String)
  case unreadable(file: String)
  /// A `.sql` file whose name is not `NNNN_name.sql`, or a version used twice.
  case badFileName(String)
  case failed(file: String, underlying: PostgresError)

  public var description: String {
    switch self {
    case .checksumMismatch(let file):
      return "migration \(file) was edited after it was applied (its SHA-256 differs from "
        + "schema_migrations); restore the file and put the change in a new migration"
    case .unreadable(let file):
      return "cannot read migration \(file)"
    case .badFileName(let name):
      return "migration file \(name) must be named NNNN_name.sql with a unique NNNN"
    case .failed(let file, let underlying):
      return
        "migration \(file) failed: \(underlying.sqlState ?? "no SQLSTATE") \(underlying.message)"
    }
  }
}
