/// Builds an XML 1.0 document as text. Element and attribute names are the caller's literals;
/// every value goes through `escapedText` or `escapedAttribute`, so nothing a product's editor
/// or a store writes can open an element, close one early or end a CDATA section.
struct XMLWriter {
  private(set) var text = #"<?xml version="1.0" encoding="UTF-8"?>"# + "\n"

  /// `<name a="v" …>`, or `<name … />` when `empty`. Attributes whose value is nil are left out.
  mutating func open(_ name: String, _ attributes: [(String, String?)] = [], empty: Bool = false) {
    text += "<" + name
    for (attribute, value) in attributes {
      guard let value else { continue }
      text += " " + attribute + "=\"" + Self.escapedAttribute(value) + "\""
    }
    text += empty ? "/>" : ">"
  }

  mutating func close(_ name: String) { text += "</" + name + ">" }

  /// `<name …>text</name>`.
  mutating func element(_ name: String, _ attributes: [(String, String?)] = [], text value: String)
  {
    open(name, attributes)
    text += Self.escapedText(value)
    close(name)
  }

  mutating func newline() { text += "\n" }

  var bytes: [UInt8] { Array(text.utf8) }

  /// Character data: `&`, `<` and `>` (the last so `]]>` cannot appear) as references; a
  /// carriage return as `&#13;`, which a parser would otherwise fold into a line feed.
  static func escapedText(_ value: String) -> String {
    escaped(value) { scalar in
      switch scalar {
      case "&": "&amp;"
      case "<": "&lt;"
      case ">": "&gt;"
      case "\r": "&#13;"
      default: nil
      }
    }
  }

  /// An attribute value in double quotes: also both quotes, and tab, line feed and carriage
  /// return as references, which attribute-value normalization would turn into spaces.
  static func escapedAttribute(_ value: String) -> String {
    escaped(value) { scalar in
      switch scalar {
      case "&": "&amp;"
      case "<": "&lt;"
      case ">": "&gt;"
      case "\"": "&quot;"
      case "'": "&apos;"
      case "\t": "&#9;"
      case "\n": "&#10;"
      case "\r": "&#13;"
      default: nil
      }
    }
  }

  /// XML 1.0 cannot carry the C0 controls other than tab, line feed and carriage return, nor
  /// U+FFFE and U+FFFF, not even as references: those become U+FFFD, the replacement character.
  static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x9, 0xA, 0xD: true
    case 0x20...0xFFFD: true
    case 0x10000...0x10FFFF: true
    default: false
    }
  }

  private static func escaped(_ value: String, _ reference: (Unicode.Scalar) -> String?) -> String {
    // Most values need nothing: hand them back as they are.
    guard value.unicodeScalars.contains(where: { reference($0) != nil || !isAllowed($0) }) else {
      return value
    }
    var out = ""
    out.reserveCapacity(value.utf8.count + 16)
    for scalar in value.unicodeScalars {
      if let replacement = reference(scalar) {
        out += replacement
      } else if isAllowed(scalar) {
        out.unicodeScalars.append(scalar)
      } else {
        out += "\u{FFFD}"
      }
    }
    return out
  }
}
