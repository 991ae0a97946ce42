/// A chart's period: PostgreSQL's `date_trunc` field of the same name (weeks start on Monday,
/// as ISO 8601 has them).
package enum ChartResolution: String, Sendable, CaseIterable {
  case day, week, month
}
