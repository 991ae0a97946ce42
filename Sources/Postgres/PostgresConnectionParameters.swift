import CPostgres
import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// libpq keyword/value pairs: the URL (or conninfo string) first, expanded by libpq, then the
/// client-side settings Storekeeper relies on. The encoding wins over the URL's; the rest are
/// defaults, and a value the URL gives for one of them is kept (`connect_timeout`,
/// `application_name`, the keepalives, `tcp_user_timeout`): an operator writes it there on
/// purpose.
///
/// A database host that vanishes without a reset (a crash, a failover that isolates the old
/// primary) is noticed within about `deadPeerMs` either way: on an idle session by keepalives
/// (10 s idle, then a probe every 5 s, three unanswered), and on one whose statement is in
/// flight by `tcp_user_timeout`, since keepalives probe only while nothing sent is waiting
/// for its acknowledgement; without it such a statement waits for TCP's retransmissions to
/// give up, about 15 minutes on Linux. Only unacknowledged data counts: a statement that runs
/// long on a live server is never cut short by it.
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
    let defaults = [
      ("connect_timeout", String(max(1, connectTimeoutSeconds))),
      ("application_name", "storekeeper"),
      ("keepalives", "1"),
      ("keepalives_idle", "10"),
      ("keepalives_interval", "5"),
      ("keepalives_count", "3"),
      ("tcp_user_timeout", String(Self.deadPeerMs)),
    ]
    pairs =
      [("dbname", url), ("client_encoding", "UTF8")]
      + defaults.map { keyword, value in (keyword, given[keyword] ?? value) }
  }

  /// `message` with the passwords of the URL these pairs came from masked
  /// (`PostgresConnectionString.masking`).
  func masking(_ message: String) -> String {
    guard let url = pairs.first(where: { $0.0 == "dbname" })?.1 else { return message }
    return PostgresConnectionString(url).masking(message)
  }

  /// About how long a session takes to notice a vanished peer, idle or not (the keepalives'
  /// 10 + 3 × 5 s, and `tcp_user_timeout`).
  static let deadPeerMs = 25_000

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
