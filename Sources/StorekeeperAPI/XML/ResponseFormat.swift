/// Which representation an answer that has two takes: JSON (the default, and what every other
/// route answers) or XML, for clients such as seed 000's that read their shop as XML. Chosen by
/// the path's `.xml` form or by `Accept`; an `Accept` naming neither is answered in JSON, as
/// the rest of the server does (it never answers 406).
enum ResponseFormat: Sendable, Equatable {
  case json
  case xml

  /// XML only when `Accept` names XML (`application/xml` or `text/xml`) and gives it a higher
  /// quality than JSON, each judged by the most specific range that matches it (RFC 9110
  /// §12.5.1); a tie is JSON. An `Accept` without "xml" in it (wildcards alone too) is JSON
  /// without being parsed, so the catalog's fast path costs one header lookup.
  static func preferred(_ accept: String?) -> ResponseFormat {
    guard let accept, accept.utf8.count <= 4096, mentionsXML(accept) else { return .json }
    var ranges: [String: Double] = [:]
    for item in accept.split(separator: ",").prefix(64) {
      let parts = item.split(separator: ";")
      guard let first = parts.first else { continue }
      let range = trimmed(first).lowercased()
      var quality = 1.0
      for parameter in parts.dropFirst() {
        let pair = parameter.split(separator: "=", maxSplits: 1)
        guard pair.count == 2, trimmed(pair[0]).lowercased() == "q" else { continue }
        guard let q = Double(trimmed(pair[1])), (0...1).contains(q) else {
          quality = 0
          break
        }
        quality = q
      }
      ranges[range] = max(ranges[range] ?? 0, quality)
    }
    func quality(_ type: String, _ subtype: String) -> Double {
      ranges["\(type)/\(subtype)"] ?? ranges["\(type)/*"] ?? ranges["*/*"] ?? 0
    }
    let xml = max(quality("application", "xml"), quality("text", "xml"))
    return xml > quality("application", "json") ? .xml : .json
  }

  /// Whether "xml" appears in any case: one pass over the bytes, no copy.
  static func mentionsXML(_ text: String) -> Bool {
    var matched = 0
    for byte in text.utf8 {
      let lower = byte | 0x20
      switch (matched, lower) {
      case (0, UInt8(ascii: "x")), (1, UInt8(ascii: "m")): matched += 1
      case (2, UInt8(ascii: "l")): return true
      default: matched = lower == UInt8(ascii: "x") ? 1 : 0
      }
    }
    return false
  }

  private static func trimmed(_ text: Substring) -> String {
    var rest = text
    // removeFirst/removeLast are O(1) on a substring; `rest = rest.dropLast()` counts it each
    // time, quadratic in a header a client pads.
    while let first = rest.first, first == " " || first == "\t" { rest.removeFirst() }
    while let last = rest.last, last == " " || last == "\t" { rest.removeLast() }
    return String(rest)
  }
}
