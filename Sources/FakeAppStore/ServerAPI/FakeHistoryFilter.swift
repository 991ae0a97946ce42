import AppStore
import Foundation

/// Get Transaction History's filters, as Apple's client sends them (`productId`, `productType`
/// and `subscriptionGroupIdentifier` repeated for each value; dates in milliseconds): the fake
/// once ignored them all and answered the whole history, so a filtered request passed on
/// data Apple would never send.
struct FakeHistoryFilter {
  var productIds: Set<String> = []
  var productTypes: Set<TransactionType> = []
  var groups: Set<String> = []
  var startDate: Int64?
  var endDate: Int64?
  var ownership: InAppOwnershipType?
  var revoked: Bool?

  /// The filter a request target asks for, or the name of the parameter Apple would refuse.
  static func parse(target: String) -> Result<FakeHistoryFilter, FakeHistoryFilterError> {
    var filter = FakeHistoryFilter()
    let query = target.split(separator: "?", maxSplits: 1).dropFirst().first ?? ""
    for pair in query.split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let key = String(parts[0]).removingPercentEncoding ?? String(parts[0])
      let raw = parts.count > 1 ? String(parts[1]) : ""
      let value = raw.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? raw
      switch key {
      case "productId": filter.productIds.insert(value)
      case "subscriptionGroupIdentifier": filter.groups.insert(value)
      case "productType":
        guard let type = Self.productTypes[value] else { return .failure(.invalid(key)) }
        filter.productTypes.insert(type)
      case "startDate", "endDate":
        guard let millis = Int64(value), millis >= 0 else { return .failure(.invalid(key)) }
        if key == "startDate" { filter.startDate = millis } else { filter.endDate = millis }
      case "inAppOwnershipType":
        guard let ownership = InAppOwnershipType(rawValue: value) else {
          return .failure(.invalid(key))
        }
        filter.ownership = ownership
      case "revoked":
        switch value.lowercased() {
        case "true": filter.revoked = true
        case "false": filter.revoked = false
        default: return .failure(.invalid(key))
        }
      default: continue
      }
    }
    if let start = filter.startDate, let end = filter.endDate, end <= start {
      return .failure(.invalid("endDate"))
    }
    return .success(filter)
  }

  /// Apple's names for the product types the history filters by.
  static let productTypes: [String: TransactionType] = [
    "AUTO_RENEWABLE": .autoRenewableSubscription, "NON_RENEWABLE": .nonRenewingSubscription,
    "CONSUMABLE": .consumable, "NON_CONSUMABLE": .nonConsumable,
  ]

  /// Whether `transaction` is in the history this filter asks for: each given filter holds
  /// (the values of one filter are alternatives), the dates over the purchase date, the end
  /// excluded.
  func admits(_ transaction: FakeTransaction) -> Bool {
    if !productIds.isEmpty, !productIds.contains(transaction.productId) { return false }
    if !productTypes.isEmpty, !productTypes.contains(transaction.type) { return false }
    if !groups.isEmpty {
      guard let group = transaction.subscriptionGroupIdentifier, groups.contains(group) else {
        return false
      }
    }
    if let startDate, transaction.purchaseDate < startDate { return false }
    if let endDate, transaction.purchaseDate >= endDate { return false }
    if let ownership, transaction.ownership != ownership { return false }
    if let revoked, (transaction.revocationDate != nil) != revoked { return false }
    return true
  }
}
