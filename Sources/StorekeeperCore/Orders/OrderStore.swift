import Postgres

/// Which store an order is paid in (`orders.store`): the App Store, or Google Play.
package enum OrderStore: String, Codable, Sendable, PostgresEnum {
  case appStore = "app_store"
  case googlePlay = "google_play"
}
