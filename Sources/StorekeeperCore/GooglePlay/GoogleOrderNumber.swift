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

  /// Whether `orderId`, an order Storekeeper never recorded, is numbered before one it did
  /// record of the same subscription: a period it never credited, not the latest (the app
  /// reported after a renewal, or that renewal's push was lost and a later one came). Only an
  /// unknown order numbered after every known one (or one without a known place) can stand
  /// for the latest.
  static func precedes(_ orderId: String, anyOf known: [String]) -> Bool {
    guard let named = GoogleOrderNumber(orderId) else { return false }
    return known.contains { id in
      guard let other = GoogleOrderNumber(id) else { return false }
      return other.base == named.base && named.renewal < other.renewal
    }
  }

  /// Most periods one read-back fills in: a push lost now and then leaves a gap of one or two,
  /// and the subscription sweep closes any gap within a pass; a number far beyond the known
  /// ones is not a lost push.
  static let maxMissing = 100

  /// The renewals numbered after every recorded order of `orderId`'s subscription and before
  /// `orderId`, oldest first: periods Google charged whose pushes never came. Empty when
  /// `orderId` has no known place, no recorded order shares its subscription, or the gap is
  /// wider than `maxMissing`.
  static func missing(before orderId: String, recorded: [String]) -> [String] {
    guard let named = GoogleOrderNumber(orderId) else { return [] }
    let last = recorded.compactMap(GoogleOrderNumber.init)
      .filter { $0.base == named.base }.map(\.renewal).max()
    guard let last, last + 1 < named.renewal, named.renewal - last - 1 <= maxMissing else {
      return []
    }
    return (last + 1..<named.renewal).map { "\(named.base)..\($0)" }
  }
}
