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

  /// The audit trail's `target_id` of a rate: its path's three parts.
  package static func targetId(reporting: String, currency: String, validFrom: String) -> String {
    "\(reporting)/\(currency)/\(validFrom)"
  }

  /// Writes the rate of a pair from a day; nil when the table is full and this is a new row.
  /// `created` says whether it is one. The write and its audit row (the rate before and
  /// after) commit together.
  package func put(
    reporting: String, currency: String, validFrom: String, rate: String, by actor: AdminActor
  ) async throws -> (rate: CurrencyRate, created: Bool)? {
    try await database.withTransaction { tx in
      // One writer at a time, so that the bound holds under concurrent writes and the row
      // read here is the one the write replaces.
      try await tx.execute("LOCK TABLE currency_rates IN SHARE ROW EXCLUSIVE MODE")
      let before = try await tx.query(
        """
        SELECT \(unescaped: CurrencyRate.columns) FROM currency_rates
        WHERE reporting_currency = \(reporting) AND currency = \(currency)
          AND valid_from = \(validFrom)::date
        """
      ).first.map(CurrencyRate.init(row:))
      let rows = try await tx.query(
        """
        WITH n AS (SELECT count(*) AS n FROM currency_rates)
        INSERT INTO currency_rates (reporting_currency, currency, valid_from, rate, updated_by)
        SELECT \(reporting), \(currency), \(validFrom)::date, \(rate)::numeric, \(actor.name)
        FROM n WHERE \(before != nil)::boolean OR n.n < \(Self.maxRates)
        ON CONFLICT (reporting_currency, currency, valid_from) DO UPDATE SET
          rate = EXCLUDED.rate, updated_by = EXCLUDED.updated_by, updated_at = now()
        RETURNING \(unescaped: CurrencyRate.columns)
        """)
      guard let row = rows.first else { return nil }
      let after = try CurrencyRate(row: row)
      try await AuditLog.record(
        .currencyRateWritten, by: actor,
        targetId: Self.targetId(reporting: reporting, currency: currency, validFrom: validFrom),
        before: before, after: after, on: tx)
      return (after, before == nil)
    }
  }

  /// Removes the rate of a pair from a day, with its audit row; false when there was none
  /// (and nothing is audited).
  package func delete(
    reporting: String, currency: String, validFrom: String, by actor: AdminActor
  ) async throws -> Bool {
    try await database.withTransaction { tx in
      let removed = try await tx.query(
        """
        DELETE FROM currency_rates WHERE reporting_currency = \(reporting)
          AND currency = \(currency) AND valid_from = \(validFrom)::date
        RETURNING \(unescaped: CurrencyRate.columns)
        """
      ).first.map(CurrencyRate.init(row:))
      guard let removed else { return false }
      try await AuditLog.record(
        .currencyRateDeleted, by: actor,
        targetId: Self.targetId(reporting: reporting, currency: currency, validFrom: validFrom),
        before: removed, after: CurrencyRate?.none, on: tx)
      return true
    }
  }
}
