import Postgres

/// One admin-maintained rate (Migrations/0075): one unit of `currency` is worth `rate` of
/// `reportingCurrency` from the UTC day `validFrom` until the pair's next rate.
package struct CurrencyRate: Encodable, Sendable, Equatable {
  package var reportingCurrency: String
  package var currency: String
  /// `YYYY-MM-DD`.
  package var validFrom: String
  /// Decimal text, as written.
  package var rate: String
  var updatedBy: String
  var updatedAt: String

  enum CodingKeys: String, CodingKey {
    case reportingCurrency = "reporting_currency"
    case currency
    case validFrom = "valid_from"
    case rate
    case updatedBy = "updated_by"
    case updatedAt = "updated_at"
  }

  static let columns =
    "reporting_currency, currency, to_char(valid_from, 'YYYY-MM-DD') AS valid_from, "
    + "rate::text AS rate, updated_by, " + SQLTime.rfc3339("updated_at")

  init(row: PostgresRow) throws {
    reportingCurrency = try row.decode("reporting_currency")
    currency = try row.decode("currency")
    validFrom = try row.decode("valid_from")
    rate = try row.decode("rate")
    updatedBy = try row.decode("updated_by")
    updatedAt = try row.decode("updated_at")
  }
}
