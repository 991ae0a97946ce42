import Postgres

/// The rate table the money charts convert with (docs/CHARTS.md, currency conversion). It is
/// bounded (`maxRates`) so that the table an admin token can grow stays small.
package struct CurrencyRates: Sendable {
  let database: PostgresPool

  /// Ten years of daily rates for a couple of currencies, or monthly ones for every currency.
  package static let maxRates = 10_000

  package init(database: PostgresPool) {
    self.database = database
  }

  /// Every rate, by reporting currency, currency and day; into `reporting` only when given.
  package func list(reporting: String?) async throws -> [CurrencyRate] {
    try await database.query(
      """
      SELECT \(unescaped: CurrencyRate.columns) FROM currency_rates
      WHERE \(reporting)::text IS NULL OR reporting_currency = \(reporting)
      ORDER BY reporting_currency, currency, valid_from
      """
    ).map(CurrencyRate.init(row:))
  }

  /// Writes the rate of a pair from a day; nil when the table is full and this is a new row.
  /// `created` says whether it is one.
  package func put(
    reporting: String, currency: String, validFrom: String, rate: String, by actor: AdminActor
  ) async throws -> (rate: CurrencyRate, created: Bool)? {
    try await database.withTransaction { tx in
      // One writer at a time, so that the bound holds under concurrent writes.
      try await tx.execute("LOCK TABLE currency_rates IN SHARE ROW EXCLUSIVE MODE")
      let rows = try await tx.query(
        """
        WITH n AS (SELECT count(*) AS n FROM currency_rates),
        old AS (SELECT 1 FROM currency_rates WHERE reporting_currency = \(reporting)
                AND currency = \(currency) AND valid_from = \(validFrom)::date)
        INSERT INTO currency_rates (reporting_currency, currency, valid_from, rate, updated_by)
        SELECT \(reporting), \(currency), \(validFrom)::date, \(rate)::numeric, \(actor.name)
        FROM n WHERE n.n < \(Self.maxRates) OR EXISTS (SELECT 1 FROM old)
        ON CONFLICT (reporting_currency, currency, valid_from) DO UPDATE SET
          rate = EXCLUDED.rate, updated_by = EXCLUDED.updated_by, updated_at = now()
        RETURNING \(unescaped: CurrencyRate.columns), (xmax = 0) AS created
        """)
      guard let row = rows.first else { return nil }
      return (try CurrencyRate(row: row), try row.decode("created"))
    }
  }

  /// Removes the rate of a pair from a day; false when there was none.
  package func delete(reporting: String, currency: String, validFrom: String) async throws
    -> Bool
  {
    try await database.execute(
      """
      DELETE FROM currency_rates WHERE reporting_currency = \(reporting)
        AND currency = \(currency) AND valid_from = \(validFrom)::date
      """) > 0
  }
}
