import Foundation

/// Opaque keyset cursors: base64url of the last key of a page.
enum Cursor {
  static func encode(_ key: String) -> String {
    Data(key.utf8).base64EncodedString()
      .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
  }

  static func decode(_ cursor: String) -> String? {
    guard cursor.count <= 200 else { return nil }
    var text = cursor.replacingOccurrences(of: "-", with: "+").replacingOccurrences(
      of: "_", with: "/")
    while text.count % 4 != 0 { text += "=" }
    guard let data = Data(base64Encoded: text) else { return nil }
    return String(data: data, encoding: .utf8)
  }
}
