import HTTP
import Postgres

/// `limit` and `cursor` of a keyset-paged admin listing, with the same rules everywhere.
struct PageRequest {
  var limit = 50
  /// The cursor: the last key of the previous page.
  var after: String?

  static let maxLimit = 200

  /// Reads `limit` and `cursor`, and names every query parameter outside `known`.
  init(
    _ query: [String: String], known: Set<String>, problems: inout [FieldError],
    cursorRule: String, isKey: (String) -> Bool
  ) {
    for name in query.keys.sorted() where !known.union(["limit", "cursor"]).contains(name) {
      problems.append(FieldError(field: name, message: "is not a known filter"))
    }
    if let text = query["limit"] {
      if let value = Int(text), (1...Self.maxLimit).contains(value) {
        limit = value
      } else {
        problems.append(
          FieldError(field: "limit", message: "must be between 1 and \(Self.maxLimit)"))
      }
    }
    // The cursor is the last key of the previous page as written, so any value of a key's
    // shape is a place to page from (an empty page past the end), never an error.
    if let cursor = query["cursor"] {
      if isKey(cursor) {
        after = cursor
      } else {
        problems.append(FieldError(field: "cursor", message: cursorRule))
      }
    }
  }

  /// A listing keyed by a bigint id, newest first: the cursor is the last id, 1-18 digits.
  init(
    numeric query: [String: String], known: Set<String>, problems: inout [FieldError],
    cursorRule: String = "must be 1-18 digits"
  ) {
    self.init(
      query, known: known, problems: &problems, cursorRule: cursorRule,
      isKey: { !$0.isEmpty && $0.utf8.count <= 18 && $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } })
  }

  /// The numeric cursor: only ids below it belong to the next page.
  var before: Int64? { after.flatMap(Int64.init) }

  /// A free-text filter PostgreSQL can hold and an index can compare: 1-`maxLength`
  /// characters, no NUL; nil when absent, a problem when malformed.
  static func text(
    _ query: [String: String], _ name: String, maxLength: Int = 128,
    problems: inout [FieldError]
  ) -> String? {
    guard let value = query[name] else { return nil }
    guard (1...maxLength).contains(value.unicodeScalars.count), !PostgresText.containsNUL(value)
    else {
      problems.append(
        FieldError(field: name, message: "must be 1-\(maxLength) characters, without NUL"))
      return nil
    }
    return value
  }

  /// Throws 400 naming every parameter that was wrong.
  static func check(_ problems: [FieldError]) throws {
    guard problems.isEmpty else {
      throw HTTPError(
        400, code: "invalid_query", detail: "one or more query parameters are invalid",
        fields: problems)
    }
  }
}
