import Foundation

/// Keys and tokens made by PyJWT (`Vectors/make-vectors.py`), so our verifier is checked
/// against an implementation that is not ours.
struct Vectors: Decodable {
  var now: Double
  var issuer: String
  var audience: String
  var secret: String
  var valid: [String: String]
  var invalid: [String: String]

  static let loaded: Vectors = {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("Vectors/vectors.json")
    guard let data = FileManager.default.contents(atPath: url.path),
      let vectors = try? JSONDecoder().decode(Vectors.self, from: data)
    else { fatalError("cannot read \(url.path)") }
    return vectors
  }()

  /// The `jwks` member as the bytes a JWKS URL would serve.
  static let jwksBytes: [UInt8] = {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
      .appendingPathComponent("Vectors/vectors.json")
    guard let data = FileManager.default.contents(atPath: url.path),
      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
      let jwks = object["jwks"],
      let bytes = try? JSONSerialization.data(withJSONObject: jwks)
    else { fatalError("cannot read the JWKS in \(url.path)") }
    return [UInt8](bytes)
  }()
}
