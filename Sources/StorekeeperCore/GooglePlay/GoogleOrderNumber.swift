/// Where a Google Play order id falls in its subscription: Google names a subscription's
/// first order `GPA.1234-5678-9012-34567` and each renewal's after it `…..0`, `…..1`, and so
/// on. Ids of any other shape have no known place.
struct GoogleOrderNumber: Equatable, Sendable {
  /// The first order's id.
  let base: String
  /// -1 for the first order, n for the renewal `..n`.
  let renewal: Int

  init?(_ orderId: String) {
    guard orderId.hasPrefix("GPA.") else { return nil }
    guard let marker = orderId.range(of: "..") else {
      base = orderId
      renewal = -1
      return
    }
    guard let index = Int(orderId[marker.upperBound...]), index >= 0 else { return nil }
    base = String(orderId[..<marker.lowerBound])
    renewal = index
  }

  /// Whether `orderId` is an order of the same subscription before every one of `known`: a
  /// period Storekeeper never credited (the app reported after a renewal). False when any id
  /// has no known place, so an unknown order is taken as a later one, as before.
  static func precedes(_ orderId: String, all known: [String]) -> Bool {
    guard let named = GoogleOrderNumber(orderId), !known.isEmpty else { return false }
    for id in known {
      guard let other = GoogleOrderNumber(id), other.base == named.base,
        named.renewal < other.renewal
      else { return false }
    }
    return true
  }
}
