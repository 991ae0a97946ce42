/// What a chart's rows are split by: one column of `chart_transactions`. The column is chosen
/// here, from this closed list, so no request text ever reaches the SQL.
package enum ChartSegment: String, Sendable, CaseIterable {
  case none, store, product, country, environment

  /// The expression, over a row aliased `x`, that names a row's segment.
  var column: String {
    switch self {
    case .none: "NULL::text"
    case .store: "x.store"
    case .product: "x.product_id"
    case .country: "x.country"
    case .environment: "x.environment"
    }
  }
}
