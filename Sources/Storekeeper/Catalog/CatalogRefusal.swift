/// Why an admin's catalog change is refused; the edge maps each case to its problem answer.
enum CatalogRefusal: Error, Equatable, Sendable {
  case productNotFound(String)
  /// `If-Match` names a revision that is no longer current.
  case preconditionFailed
  /// Orders refer to it: it can be archived (`active: false`), not removed.
  case productHasOrders(String)
}
