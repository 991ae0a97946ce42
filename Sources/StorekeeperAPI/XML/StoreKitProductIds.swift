/// Seed 000's naming: its client builds each App Store product id as a fixed prefix plus the
/// `nid` the shop's XML gives it (`XML_PRODUCT_ID_PREFIX`, e.g. `com.example.appname.`).
struct StoreKitProductIds: Sendable, Equatable {
  let prefix: String

  init(prefix: String) { self.prefix = prefix }

  /// The `nid` of a product id: what follows the prefix, or nil when the id does not start
  /// with it (or is the prefix alone), since such a client could not name that product.
  func nid(_ productId: String) -> String? {
    guard productId.hasPrefix(prefix), productId.utf8.count > prefix.utf8.count else {
      return nil
    }
    return String(productId.dropFirst(prefix.count))
  }
}
