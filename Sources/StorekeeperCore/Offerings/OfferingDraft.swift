/// An offering as an admin wants it stored: a named, ordered list of products and what a
/// paywall shows with them (a title, a badge, free-form JSON the app interprets).
package struct OfferingDraft: Sendable, Equatable {
  package var offeringId: String
  package var title: String
  package var badge: String
  /// A JSON object, at most `maxMetadataBytes` encoded.
  package var metadata: JSONValue
  package var items: [OfferingItem]

  package init(
    offeringId: String, title: String, badge: String, metadata: JSONValue, items: [OfferingItem]
  ) {
    self.offeringId = offeringId
    self.title = title
    self.badge = badge
    self.metadata = metadata
    self.items = items
  }

  package static let maxMetadataBytes = 16 * 1024
  package static let maxItems = 50
  /// The offering the placement `default` serves when no offering of that id is stored: the
  /// whole active catalog, in catalog order.
  package static let catalogOfferingId = "default"

  /// Offering, placement, experiment and variant ids: 1-64 of `[a-z0-9_-]`.
  package static func isValidId(_ id: String) -> Bool {
    let bytes = id.utf8
    return !bytes.isEmpty && bytes.count <= 64
      && bytes.allSatisfy { byte in
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
          UInt8(ascii: "_"), UInt8(ascii: "-"):
          true
        default: false
        }
      }
  }
}
