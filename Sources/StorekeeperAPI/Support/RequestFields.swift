import Foundation
import HTTP
import Postgres
import StorekeeperCore

/// The top-level fields of a request body, from JSON or from a form post (seed 000 posts
/// `receipt=…&id=…` without percent-encoding), read with field-level validation errors.
/// A field is absent or of its type: `null` is refused like any other wrong type, as the
/// schemas in openapi.yaml say (none of them is nullable).
package struct RequestFields {
  private(set) var values: [String: JSONValue]
  private(set) var errors: [FieldError] = []

  static let maxDepth = 16

  init(values: [String: JSONValue]) { self.values = values }

  init(request: Request, allowForm: Bool = false) throws {
    let contentType = (request.headers["Content-Type"] ?? "").lowercased()
    if allowForm && contentType.hasPrefix("application/x-www-form-urlencoded") {
      // NSURLConnection declares every body it is not told about a form: a JSON object posted
      // that way (seeds 001 and 002's `{"receipt-data": …}`) is read as the JSON it is.
      if let object = Self.jsonObject(declaredForm: request.body) {
        self.init(values: object)
        return
      }
      self.init(values: FormDecoding.decode(request.body).mapValues { .string($0) })
      return
    }
    try Self.requireJSON(request, orForm: allowForm)
    let value: JSONValue
    do {
      value = try JSONParser.parse(request.body, maxDepth: Self.maxDepth)
    } catch .tooDeep {
      throw HTTPError(400, code: "malformed_json", detail: "the body is nested too deeply")
    } catch {
      throw HTTPError(400, code: "malformed_json", detail: "the body is not valid JSON")
    }
    guard case .object(let object) = value else {
      throw HTTPError(400, code: "malformed_json", detail: "the body must be a JSON object")
    }
    self.init(values: object)
  }

  /// A body declared a form that is a JSON object: its first byte after JSON whitespace is `{`
  /// (no form a client builds starts with it) and it parses as an object. Anything else,
  /// malformed JSON included, stays a form, read as before.
  static func jsonObject(declaredForm body: [UInt8]) -> [String: JSONValue]? {
    let whitespace: Set<UInt8> = [0x20, 0x09, 0x0A, 0x0D]
    guard body.first(where: { !whitespace.contains($0) }) == UInt8(ascii: "{"),
      case .object(let object)? = try? JSONParser.parse(body, maxDepth: maxDepth)
    else { return nil }
    return object
  }

  /// 415 unless the body is declared JSON (or not declared at all, as curl sends it).
  static func requireJSON(_ request: Request, orForm allowForm: Bool = false) throws {
    let contentType = (request.headers["Content-Type"] ?? "").lowercased()
    guard contentType.isEmpty || contentType.hasPrefix("application/json") else {
      throw HTTPError(
        415, code: "unsupported_media_type",
        detail: allowForm
          ? "send application/json or application/x-www-form-urlencoded"
          : "send application/json")
    }
  }

  func has(_ name: String) -> Bool { values[name] != nil }

  mutating func fail(_ field: String, _ message: String) {
    errors.append(FieldError(field: field, message: message))
  }

  /// Throws 422 with every field error found so far.
  func validate() throws {
    guard errors.isEmpty else {
      throw HTTPError(
        422, code: "validation_failed", detail: "one or more fields are invalid", fields: errors)
    }
  }

  mutating func string(_ name: String, required: Bool = false, maxLength: Int = 1000) -> String? {
    switch values[name] {
    case nil:
      if required { fail(name, "is required") }
      return nil
    case .string(let text)?:
      // PostgreSQL text cannot hold NUL: refuse it here rather than fail in the database.
      if PostgresText.containsNUL(text) {
        fail(name, "must not contain NUL characters")
        return nil
      }
      // A character is at least one byte: only a text longer in bytes can be too long.
      if text.utf8.count > maxLength, text.unicodeScalars.count > maxLength {
        fail(name, "must be at most \(maxLength) characters")
        return nil
      }
      return text
    default:
      fail(name, "must be a string")
      return nil
    }
  }

  /// An integer: a JSON number whose value is whole (`4.0` too, as JSON Schema counts integers);
  /// `"4"` is a string, not an integer.
  mutating func integer(_ name: String, required: Bool = false, range: ClosedRange<Int64>) -> Int64?
  {
    let parsed: JSONInteger
    switch values[name] {
    case nil:
      if required { fail(name, "is required") }
      return nil
    case .number(let number)?: parsed = JSONInteger(number)
    default:
      fail(name, "must be an integer")
      return nil
    }
    guard case .value(let value) = parsed, range.contains(value) else {
      fail(
        name,
        parsed == .notAnInteger
          ? "must be an integer" : "must be between \(range.lowerBound) and \(range.upperBound)")
      return nil
    }
    return value
  }

  mutating func bool(_ name: String) -> Bool? {
    switch values[name] {
    case nil: return nil
    case .bool(let value)?: return value
    default:
      fail(name, "must be true or false")
      return nil
    }
  }

  mutating func object(_ name: String) -> JSONValue? {
    switch values[name] {
    case nil: return nil
    case .object?:
      if values[name]?.containsNUL == true {
        fail(name, "must not contain NUL characters")
        return nil
      }
      return values[name]
    default:
      fail(name, "must be a JSON object")
      return nil
    }
  }

  /// Rejects fields the endpoint does not know, so a typo is an error rather than ignored.
  /// Names at most `maxUnknownNamed` unknown fields (the first by name) and counts the rest:
  /// a 1 MiB body of 120,000 unknown keys was answered with a 6 MB problem, sorted and encoded
  /// on the event loop.
  mutating func rejectUnknown(allowed: Set<String>) {
    let unknown = values.keys.filter { !allowed.contains($0) }.sorted()
    for name in unknown.prefix(Self.maxUnknownNamed) { fail(name, "is not a known field") }
    if unknown.count > Self.maxUnknownNamed {
      fail(
        unknown[Self.maxUnknownNamed],
        "is not a known field, nor are \(unknown.count - Self.maxUnknownNamed - 1) more")
    }
  }

  static let maxUnknownNamed = 20
}
