/// A keyset page is read with one row more than asked for: that row only says a next page
/// exists, whose cursor is the last key of this one.
enum KeysetPage {
  static func split<Item>(_ rows: [Item], limit: Int, key: (Item) -> String)
    -> (items: [Item], next: String?)
  {
    guard rows.count > limit else { return (rows, nil) }
    let items = Array(rows.prefix(limit))
    return (items, items.last.map(key))
  }
}
