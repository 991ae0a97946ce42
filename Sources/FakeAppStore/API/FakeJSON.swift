import Foundation
import HTTP

/// The fake's own endpoints speak snake_case JSON; Apple-shaped bodies are encoded the same way
/// (their Swift properties are camelCase spellings of Apple's snake_case keys).
enum FakeJSON {
  static func decode<Body: Decodable>(_ type: Body.Type, from request: Request) throws -> Body {
    let decoder = JSONDecoder()
    decoder.keyDecodingStrategy = .convertFromSnakeCase
    guard (try? JSONSerialization.jsonObject(with: Data(request.body))) is [String: Any] else {
      throw HTTPError(400, code: "malformed_json", detail: "The body must be a JSON object.")
    }
    do {
      return try decoder.decode(type, from: Data(request.body))
    } catch DecodingError.keyNotFound(let key, let context) {
      let field = path(context.codingPath + [key])
      throw HTTPError(
        422, code: "invalid_field", detail: "A required field is missing.",
        fields: [FieldError(field: field, message: "is required")])
    } catch DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context),
      DecodingError.dataCorrupted(let context)
    {
      throw HTTPError(
        422, code: "invalid_field", detail: "A field has the wrong type.",
        fields: [FieldError(field: path(context.codingPath), message: "has the wrong type")])
    }
  }

  static func response<Body: Encodable>(_ body: Body, status: Int = 200) throws -> Response {
    let encoder = JSONEncoder()
    encoder.keyEncodingStrategy = .convertToSnakeCase
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return Response(
      status: status, headers: ["Content-Type": "application/json"],
      body: Array(try encoder.encode(body)))
  }

  static func invalid(_ field: String, _ message: String) -> HTTPError {
    HTTPError(
      422, code: "invalid_field", detail: "\(field) \(message).",
      fields: [FieldError(field: field, message: message)])
  }

  private static func path(_ keys: [any CodingKey]) -> String {
    keys.map { key in
      key.intValue.map { "[\($0)]" } ?? snakeCase(key.stringValue)
    }.joined(separator: ".")
  }

  private static func snakeCase(_ name: String) -> String {
    var out = ""
    for character in name {
      if character.isUppercase {
        out += "_" + character.lowercased()
      } else {
        out.append(character)
      }
    }
    return out
  }
}
