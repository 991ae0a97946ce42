import Postgres

/// Who created an order: the app before a purchase, or Storekeeper for a purchase that arrived
/// without one (a receipt posted with no order, a renewal Apple reported, a purchase an admin
/// moved to another user).
enum OrderOrigin: String, Codable, Sendable, PostgresEnum {
  case order
  case receipt
  case renewal
  case transfer
}
