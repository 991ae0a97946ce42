extension Money {
  /// The amount in micros of `currencyCode`, or nothing: no currency is no price, nor is an
  /// amount that does not fit or is below zero. Google's JSON leaves out a field whose value
  /// is zero (proto3), so $0.99 comes without `units` and a free trial's total is a currency
  /// alone: a missing `units` or `nanos` is zero.
  public var micros: Int64? {
    guard currencyCode?.isEmpty == false,
      case (let scaled, false) = (units ?? 0).multipliedReportingOverflow(by: 1_000_000),
      case (let total, false) = scaled.addingReportingOverflow(Int64(nanos ?? 0) / 1000),
      total >= 0
    else { return nil }
    return total
  }
}
