/// One page of an admin listing as the API answers it: the items under the listing's own name
/// (`orders`, `entries`…) and `next_cursor`, left out on the last page.
package struct ListPage<Item: Encodable>: Encodable {
  let name: String
  let items: [Item]
  let nextCursor: String?

  package init(_ name: String, _ items: [Item], next nextCursor: String? = nil) {
    self.name = name
    self.items = items
    self.nextCursor = nextCursor
  }

  private struct Key: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }

  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    try container.encode(items, forKey: Key(stringValue: name))
    try container.encodeIfPresent(nextCursor, forKey: Key(stringValue: "next_cursor"))
  }
}
