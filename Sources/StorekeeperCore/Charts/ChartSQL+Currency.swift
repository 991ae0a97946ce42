/// Currency conversion (`?currency=`, docs/CHARTS.md): a money chart reads the stores'
/// transactions and subscription periods through `chart_transactions_in` and
/// `chart_subscription_periods_in` (Migrations/repeatable/charts_metrics.sql), which convert
/// each price at the rate in force on its day and leave one without a rate as it was signed.
extension ChartSQL {
  /// `text` reading the converting functions instead of the views. The swap is textual so
  /// that every chart's SQL stays written once, over the views.
  static func converted(_ text: String) -> String {
    text
      .replacingOccurrences(
        of: "FROM chart_transactions ",
        with: "FROM chart_transactions_in((SELECT w.cur FROM w)) "
      )
      .replacingOccurrences(
        of: "FROM chart_subscription_periods ",
        with: "FROM chart_subscription_periods_in((SELECT w.cur FROM w)) ")
  }

  /// The currencies, comma-separated, of the answer's money that is not in the reporting one:
  /// the rows' own, and cohorts' per-currency revenue. NULL without conversion.
  static let unconverted = """
    (SELECT string_agg(DISTINCT u.c, ',' ORDER BY u.c) FROM w, (
       SELECT o.currency AS c FROM o
       UNION SELECT jsonb_object_keys(o.m -> 'cumulative_revenue') FROM o
         WHERE jsonb_typeof(o.m -> 'cumulative_revenue') = 'object') u
     WHERE w.cur IS NOT NULL AND u.c IS NOT NULL AND u.c <> w.cur)
    """
}
