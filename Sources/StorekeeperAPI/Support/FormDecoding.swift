import TextSafety

/// `application/x-www-form-urlencoded` bodies. Values that were never percent-encoded (seed
/// 000's base64 receipts) come through unchanged except `+`, which turns into a space as the
/// format says; the receipt reader repairs that.
enum FormDecoding {
  static func decode(_ body: [UInt8]) -> [String: String] {
    var result: [String: String] = [:]
    for pair in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
      let parts = pair.split(
        separator: UInt8(ascii: "="), maxSplits: 1, omittingEmptySubsequences: false)
      let name = percentDecode(parts[0])
      let value = parts.count > 1 ? percentDecode(parts[1]) : ""
      // A name is hashed: one with a long run of combining marks would cost quadratic time
      // (`StreamSafeText`), so the pair is left out, as an unknown field would be.
      guard StreamSafeText.isStreamSafe(name), StreamSafeText.isStreamSafe(value) else { continue }
      if result[name] == nil { result[name] = value }
    }
    return result
  }

  static func percentDecode(_ bytes: ArraySlice<UInt8>) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    var index = bytes.startIndex
    while index < bytes.endIndex {
      let byte = bytes[index]
      if byte == UInt8(ascii: "+") {
        out.append(UInt8(ascii: " "))
      } else if byte == UInt8(ascii: "%"), bytes.endIndex - index > 2,
        let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2])
      {
        out.append(high << 4 | low)
        index += 2
      } else {
        out.append(byte)
      }
      index += 1
    }
    return String(decoding: out, as: UTF8.self)
  }

  private static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
  }
}
