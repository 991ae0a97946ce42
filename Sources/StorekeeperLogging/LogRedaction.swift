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

  /// Characters of a Google Play purchase token a log line keeps: as many as admin views show.
  public static let purchaseTokenPrefix = 12

  /// A store's transaction id as logged: Apple's (digits) and Google's order ids (`GPA.…`)
  /// whole; anything else is a Google purchase token standing in for an order id Google never
  /// gave (a promo code's purchase), and a token reads the purchase with the service account,
  /// so only its first characters are kept, then `…`.
  public static func transactionId(_ id: String) -> String {
    let digits =
      !id.isEmpty && id.utf8.allSatisfy { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
    if digits || id.hasPrefix("GPA.") || id.count <= purchaseTokenPrefix { return id }
    return String(id.prefix(purchaseTokenPrefix)) + "…"
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
