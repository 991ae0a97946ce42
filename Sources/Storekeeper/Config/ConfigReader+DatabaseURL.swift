import Postgres
import StorekeeperCore

extension ConfigReader {
  /// `name`'s `postgresql://` URL, nil when unset, checked by libpq's own parser now: a URL
  /// libpq refuses would otherwise fail only when the first pool opens, as a start-up failure
  /// (exit 1, which the packaged unit restarts) naming no variable. The refusal masks every
  /// password the URL holds (`user:password@` and `?password=`), since it is logged.
  ///
  /// A URL libpq parses into something else than meant is refused too: a password holding an
  /// `@` or `/` that is not percent-encoded becomes (in part) the host or the port, and the
  /// connection's failure, which quotes them, would be logged on every attempt.
  func databaseURL(_ name: String) throws -> String? {
    guard let url = try text(name) else { return nil }
    guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
      throw ConfigError(variable: name, problem: "must be a postgresql:// URL")
    }
    try Self.checkParses(url, name)
    return url
  }

  /// `name`'s connection string for a one-shot command (a URL or libpq's `key=value` form),
  /// nil when unset, checked by libpq's parser as `databaseURL` is.
  func connectionString(_ name: String) throws -> String? {
    guard let text = try text(name) else { return nil }
    try Self.checkParses(text, name)
    return text
  }

  private static func checkParses(_ text: String, _ name: String) throws {
    let string = PostgresConnectionString(text)
    if let problem = string.problem {
      throw ConfigError(variable: name, problem: "is not a connection URL libpq reads: \(problem)")
    }
    if let problem = string.userinfoProblem {
      throw ConfigError(variable: name, problem: problem)
    }
  }
}
