/// Values that act as credentials never reach a log line whole. A trade number is the key to
/// its order (anyone who has it may report on it), so logs keep only its first 17 characters —
/// the creation time, enough to find the order with an admin listing — followed by `…`.
public enum LogRedaction {
  /// Characters of a trade number that are its timestamp (`yyyyMMddHHmmssSSS`).
  public static let tradeNumberPrefix = 17

  public static func tradeNumber(_ tradeNo: String) -> String {
    tradeNo.count <= tradeNumberPrefix ? tradeNo : String(tradeNo.prefix(tradeNumberPrefix)) + "…"
  }

  public static func tradeNumber(_ tradeNo: String?) -> String {
    tradeNo.map { tradeNumber($0) } ?? ""
  }

  /// A path no route matched (404s, parse failures): short segments of letters, digits and
  /// `._-` stay (they show what was probed); a longer segment may be a trade number, a token or
  /// a receipt, so it keeps at most a timestamp-looking prefix of digits, then `…`.
  public static func path(_ path: String) -> String {
    let target = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first
    let segments = (target ?? "").split(separator: "/", omittingEmptySubsequences: false)
    return segments.map(segment).joined(separator: "/")
  }

  private static func segment(_ segment: Substring) -> String {
    let plain = segment.allSatisfy { ch in
      ch.isASCII && (ch.isLetter || ch.isNumber || ch == "." || ch == "_" || ch == "-")
    }
    if plain && segment.count <= 16 { return String(segment) }
    let digits = segment.prefix(tradeNumberPrefix).prefix { $0.isASCII && $0.isNumber }
    return digits.count == tradeNumberPrefix ? String(digits) + "…" : "…"
  }
}
