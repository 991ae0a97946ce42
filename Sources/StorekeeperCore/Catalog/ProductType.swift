import Postgres

/// The four kinds of in-app product, as the API spells them.
package enum ProductType: String, Codable, Sendable, CaseIterable, PostgresEnum {
  case consumable
  case nonConsumable = "non_consumable"
  case autoRenewable = "auto_renewable"
  case nonRenewing = "non_renewing"
}
