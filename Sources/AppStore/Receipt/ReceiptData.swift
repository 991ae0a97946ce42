/// The base64 app receipt a client posts, and its repair.
public enum ReceiptData {
  /// Receipts longer than this (base64 characters) are refused without calling Apple.
  public static let maximumLength = 1_048_576

  /// Restores base64 damaged in transit: a naive form post turns `+` into a space; line breaks
  /// get inserted; some clients use the url-safe alphabet or drop padding. Returns standard,
  /// padded base64, or nil when the text is empty or still not base64.
  public static func repair(_ raw: String) -> String? {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(raw.utf8.count + 3)
    var paddingSeen = false
    for byte in raw.utf8 {
      switch byte {
      case UInt8(ascii: "\n"), UInt8(ascii: "\r"): continue
      case UInt8(ascii: "="):
        paddingSeen = true
        continue
      default: break
      }
      // Data after padding means two receipts glued together or garbage.
      guard !paddingSeen else { return nil }
      switch byte {
      case UInt8(ascii: " "), UInt8(ascii: "-"): bytes.append(UInt8(ascii: "+"))
      case UInt8(ascii: "_"): bytes.append(UInt8(ascii: "/"))
      case UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
        bytes.append(byte)
      default: return nil
      }
    }
    guard !bytes.isEmpty, bytes.count % 4 != 1 else { return nil }
    bytes += Array(repeating: UInt8(ascii: "="), count: (4 - bytes.count % 4) % 4)
    return String(decoding: bytes, as: UTF8.self)
  }
}
