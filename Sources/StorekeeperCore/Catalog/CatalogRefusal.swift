/// Why an admin's catalog change is refused; the edge maps each case to its problem answer.
package enum CatalogRefusal: Error, Equatable, Sendable {
  case productNotFound(String)
  /// `If-Match` names a revision that is no longer current.
  case preconditionFailed
  /// A reorder's list is not the catalog as it is now: a product's revision moved, or a product
  /// was added or removed since the admin read it.
  case orderStale
  /// `If-None-Match: *` asked to create it only, and it exists.
  case productExists(String)
  /// Orders refer to it: it can be archived (`active: false`), not removed.
  case productHasOrders(String)
  /// Orders refer to it: its type decides what they granted and what a refund takes back, and
  /// the App Store never changes a product's type either.
  case productTypeLocked(String, ProductType)
  /// Another product already goes by this Google Play product id (its own, or its App Store
  /// id where it names none), so a purchase read back from Google would name two products.
  case googleProductIdTaken(String)
}
