import Foundation

/// Reads the certificates out of PEM text (one file may hold several).
enum PEM {
  static func certificatesDER(in text: String) -> [[UInt8]] {
    var result: [[UInt8]] = []
    var body: String?
    for rawLine in text.split(whereSeparator: \.isNewline) {
      let line = rawLine.trimmingCharacters(in: .whitespaces)
      if line == "-----BEGIN CERTIFICATE-----" {
        body = ""
      } else if line == "-----END CERTIFICATE-----" {
        if let encoded = body, let der = Data(base64Encoded: encoded), !der.isEmpty {
          result.append([UInt8](der))
        }
        body = nil
      } else if body != nil {
        body? += line
      }
    }
    return result
  }
}
