import Foundation

/// Numbers as JSONSerialization reads them. It gives `true` and `false` as NSNumbers too
/// (type code `c`), and a boolean is never a code or a time.
enum JSONNumber {
  static func nonBoolean(_ value: Any?) -> NSNumber? {
    guard let number = value as? NSNumber, String(cString: number.objCType) != "c" else {
      return nil
    }
    return number
  }
}
