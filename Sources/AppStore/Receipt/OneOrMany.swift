/// A field Apple sends as an array in one receipt format and as a single object in the other
/// (`latest_receipt_info`): either reads as a list. Elements that do not decode are dropped.
struct OneOrMany<Element: Decodable & Sendable>: Decodable, Sendable {
  var values: [Element]

  init(from decoder: any Decoder) throws {
    if let many = try? [Lossy<Element>](from: decoder) {
      values = many.compactMap(\.value)
    } else {
      values = [try Element(from: decoder)]
    }
  }
}
