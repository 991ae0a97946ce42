import Foundation
import HTTP

/// A control request's JSON object (snake_case keys), read field by field with 422 answers
/// naming the field, like the fake App Store's endpoints.
struct FakeControlBody: @unchecked Sendable {
  // A JSONSerialization object: read-only once parsed.
  let fields: [String: Any]

  init(_ request: Request) throws {
    if request.body.isEmpty {
      fields = [:]
      return
    }
    guard let object = try? JSONSerialization.jsonObject(with: Data(request.body)),
      let fields = object as? [String: Any]
    else { throw HTTPError(400, code: "malformed_json", detail: "The body must be a JSON object.") }
    self.fields = fields
  }

  func string(_ name: String) throws -> String? {
    guard let value = fields[name], !(value is NSNull) else { return nil }
    guard let text = value as? String, !text.isEmpty else {
      throw Self.invalid(name, "must be a non-empty string")
    }
    return text
  }

  func requiredString(_ name: String) throws -> String {
    guard let text = try string(name) else { throw Self.invalid(name, "is required") }
    return text
  }

  func int(_ name: String) throws -> Int64? {
    guard let value = fields[name], !(value is NSNull) else { return nil }
    guard let number = value as? NSNumber, String(cString: number.objCType) != "c",
      let exact = Int64(exactly: number.doubleValue)
    else { throw Self.invalid(name, "must be an integer") }
    return exact
  }

  func double(_ name: String) throws -> Double? {
    guard let value = fields[name], !(value is NSNull) else { return nil }
    guard let number = value as? NSNumber, String(cString: number.objCType) != "c",
      number.doubleValue.isFinite
    else { throw Self.invalid(name, "must be a number") }
    return number.doubleValue
  }

  func bool(_ name: String) throws -> Bool? {
    guard let value = fields[name], !(value is NSNull) else { return nil }
    guard let number = value as? NSNumber, String(cString: number.objCType) == "c" else {
      throw Self.invalid(name, "must be true or false")
    }
    return number.boolValue
  }

  static func invalid(_ field: String, _ message: String) -> HTTPError {
    HTTPError(
      422, code: "invalid_field", detail: "\(field) \(message).",
      fields: [FieldError(field: field, message: message)])
  }
}
