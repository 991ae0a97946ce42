import Foundation
import Postgres

/// One variant's outcome so far: users exposed, users who paid within the attribution window
/// after their first exposure, conversion with its 95% Wilson score interval, and revenue per
/// currency (gross, refunded, and per exposed user). Orders made in Apple's sandbox are left
/// out: they are testers, not the audience.
package struct VariantResult: Encodable, Sendable {
  var variant: String
  var offeringId: String
  var weight: Int
  var exposed: Int64
  var payers: Int64
  var orders: Int64
  var conversion: Double
  var conversionLow: Double
  var conversionHigh: Double
  /// By currency: gross revenue of the attributed orders.
  var revenue: [String: String]
  /// By currency: gross revenue divided by users exposed (4 decimals).
  var revenuePerExposed: [String: String]
  /// Attributed orders refunded or revoked since, and their amount by currency.
  var refunds: Int64
  var refunded: [String: String]

  enum CodingKeys: String, CodingKey {
    case variant
    case offeringId = "offering_id"
    case weight, exposed, payers, orders, conversion
    case conversionLow = "conversion_low"
    case conversionHigh = "conversion_high"
    case revenue
    case revenuePerExposed = "revenue_per_exposed"
    case refunds, refunded
  }

  /// Wilson's score interval at 95% (z = 1.96): unlike the normal approximation it stays in
  /// [0, 1] and is honest with few users or none converting.
  package static func wilson(successes: Int64, trials: Int64) -> (low: Double, high: Double) {
    guard trials > 0 else { return (0, 0) }
    let z = 1.959_963_984_540_054
    let n = Double(trials)
    let p = Double(successes) / n
    let denominator = 1 + z * z / n
    let centre = (p + z * z / (2 * n)) / denominator
    let margin = z * (p * (1 - p) / n + z * z / (4 * n * n)).squareRoot() / denominator
    return (max(0, centre - margin), min(1, centre + margin))
  }
}
