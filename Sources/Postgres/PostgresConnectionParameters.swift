import CPostgres
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// libpq keyword/value pairs: the URL (or conninfo string) first, expanded by libpq, then the
/// client-side settings Storekeeper relies on, which win over the URL's; except the URL's own
/// `connect_timeout` and `application_name`, which an operator writes there on purpose.
///
/// Nothing is set on the server through the startup packet's `options` (no `-c TimeZone=…`):
/// PgBouncer refuses that parameter, and a transaction pooler could not keep it anyway. Every
/// statement is written to be correct whatever the session's time zone; a URL's own `options`
/// still reach a direct connection.
struct PostgresConnectionParameters: Sendable {
  var pairs: [(String, String)]

  init(url: String, connectTimeoutSeconds: Int) throws {
    // Parsing first gives a clear error for a malformed URL. Its passwords are masked, and it
    // names no variable: this pool does not know which one the URL came from (the
    // configuration refuses a malformed one before any pool is made, naming it).
    var errorMessage: UnsafeMutablePointer<CChar>?
    guard let parsed = PQconninfoParse(url, &errorMessage) else {
      let message = errorMessage.map { String(cString: $0) } ?? "invalid connection string"
      if let errorMessage { PQfreemem(errorMessage) }
      throw PostgresError(
        kind: .connection,
        message: "invalid database URL: "
          + PostgresConnectionString(url).masking(message.trimmingTrailingNewlines))
    }
    defer { PQconninfoFree(parsed) }
    var given: [String: String] = [:]
    var option = parsed
    while let keyword = option.pointee.keyword {
      if let value = option.pointee.val { given[String(cString: keyword)] = String(cString: value) }
      option += 1
    }
    pairs = [
      ("dbname", url),
      ("client_encoding", "UTF8"),
      ("connect_timeout", given["connect_timeout"] ?? String(max(1, connectTimeoutSeconds))),
      ("application_name", given["application_name"] ?? "storekeeper"),
      // A server that vanishes without closing the socket is noticed by keepalives
      // (matters for the listener, which otherwise only waits for input).
      ("keepalives", "1"),
      ("keepalives_idle", "10"),
      ("keepalives_interval", "5"),
      ("keepalives_count", "3"),
    ]
  }

  /// Calls `body` with NULL-terminated C arrays for `PQconnectdbParams`.
  func withCArrays<R>(
    _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<UnsafePointer<CChar>?>) -> R
  ) -> R {
    let keys: [UnsafeMutablePointer<CChar>?] = pairs.map { strdup($0.0) } + [nil]
    let values: [UnsafeMutablePointer<CChar>?] = pairs.map { strdup($0.1) } + [nil]
    defer {
      keys.forEach { free($0) }
      values.forEach { free($0) }
    }
    let constKeys = keys.map { $0.map { UnsafePointer($0) } }
    let constValues = values.map { $0.map { UnsafePointer($0) } }
    return constKeys.withUnsafeBufferPointer { k in
      constValues.withUnsafeBufferPointer { v in
        // Both buffers hold at least the terminating nil, so their base addresses exist.
        body(k.baseAddress!, v.baseAddress!)
      }
    }
  }
}

extension String {
  var trimmingTrailingNewlines: String {
    var s = Substring(self)
    while let last = s.last, last == "\n" || last == " " { s.removeLast() }
    return String(s)
  }
}
