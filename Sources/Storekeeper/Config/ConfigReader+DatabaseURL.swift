import Postgres
import StorekeeperCore

extension ConfigReader {
  /// `name`'s `postgresql://` URL, nil when unset, checked by libpq's own parser now: a URL
  /// libpq refuses would otherwise fail only when the first pool opens, as a start-up failure
  /// (exit 1, which the packaged unit restarts) naming no variable. The refusal masks every
  /// password the URL holds (`user:password@` and `?password=`), since it is logged.
  func databaseURL(_ name: String) throws -> String? {
    guard let url = value(name) else { return nil }
    guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
      throw ConfigError(variable: name, problem: "must be a postgresql:// URL")
    }
    try Self.checkParses(url, name)
    return url
  }

  /// `name`'s connection string for a one-shot command (a URL or libpq's `key=value` form),
  /// nil when unset, checked by libpq's parser as `databaseURL` is.
  func connectionString(_ name: String) throws -> String? {
    guard let text = value(name) else { return nil }
    try Self.checkParses(text, name)
    return text
  }

  private static func checkParses(_ text: String, _ name: String) throws {
    if let problem = PostgresConnectionString(text).problem {
      throw ConfigError(variable: name, problem: "is not a connection URL libpq reads: \(problem)")
    }
  }
}
