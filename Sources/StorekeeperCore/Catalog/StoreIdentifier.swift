/// The characters App Store Connect allows in a product id or an offer id: letters, digits,
/// `.`, `_` and `-`.
package enum StoreIdentifier {
  package static func isValid(_ text: String, maxLength: Int) -> Bool {
    let bytes = text.utf8
    return !bytes.isEmpty && bytes.count <= maxLength
      && bytes.allSatisfy { byte in
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
          UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"),
          UInt8(ascii: "-"):
          true
        default: false
        }
      }
  }
}
