/// What one purchase of a product gives the user.
///
/// `balance` credits assets in the ledger (consumables: `{"gold": 100}` per unit bought);
/// `entitlement` names an access right (VIP) that lasts `duration_days` from payment for
/// non-renewing subscriptions, until Apple's `expiresDate` for auto-renewables, and forever for
/// a non-consumable. A non-consumable is also owned in itself.
package struct Grants: Codable, Sendable, Equatable {
  package var balance: [String: Int64]?
  package var entitlement: String?
  package var durationDays: Int?

  package init(
    balance: [String: Int64]? = nil, entitlement: String? = nil, durationDays: Int? = nil
  ) {
    self.balance = balance
    self.entitlement = entitlement
    self.durationDays = durationDays
  }

  enum CodingKeys: String, CodingKey {
    case balance
    case entitlement
    case durationDays = "duration_days"
  }

  package static let empty = Grants()

  package static let maxAmount: Int64 = 1_000_000_000

  /// Checks the shape against the product type; returns field errors under `grants.*`.
  package func problems(for type: ProductType) -> [(field: String, message: String)] {
    var problems: [(String, String)] = []
    if let balance {
      if type != .consumable {
        problems.append(("grants.balance", "only consumables credit balances"))
      }
      if balance.isEmpty || balance.count > 10 {
        problems.append(("grants.balance", "must name 1 to 10 assets"))
      }
      for (asset, amount) in balance.sorted(by: { $0.key < $1.key }) {
        if !Self.isName(asset) {
          problems.append(("grants.balance.\(asset)", "asset names are 1-64 of [a-z0-9_]"))
        }
        if amount <= 0 || amount > Self.maxAmount {
          problems.append(("grants.balance.\(asset)", "must be between 1 and \(Self.maxAmount)"))
        }
      }
    }
    if let entitlement, !Self.isName(entitlement) {
      problems.append(("grants.entitlement", "entitlement names are 1-64 of [a-z0-9_]"))
    }
    switch type {
    case .consumable:
      if entitlement != nil || durationDays != nil {
        problems.append(("grants", "a consumable grants balances only"))
      }
    case .nonConsumable:
      if durationDays != nil {
        problems.append(("grants.duration_days", "a non-consumable is owned forever"))
      }
    case .autoRenewable:
      if entitlement == nil {
        problems.append(
          ("grants.entitlement", "an auto-renewable subscription needs an entitlement"))
      }
      if durationDays != nil {
        problems.append(("grants.duration_days", "Apple's expiresDate decides; leave it out"))
      }
    case .nonRenewing:
      if entitlement == nil {
        problems.append(("grants.entitlement", "a non-renewing subscription needs an entitlement"))
      }
      if let days = durationDays {
        if !(1...3660).contains(days) {
          problems.append(("grants.duration_days", "must be between 1 and 3660"))
        }
      } else {
        problems.append(("grants.duration_days", "a non-renewing subscription needs a duration"))
      }
    }
    return problems
  }

  static func isName(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.count <= 64
      && text.utf8.allSatisfy { ($0 >= 97 && $0 <= 122) || ($0 >= 48 && $0 <= 57) || $0 == 95 }
  }
}
