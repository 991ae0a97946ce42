extension Money {
  /// The amount in micros of `currencyCode`, or nothing: a currency without an amount is no
  /// price, nor is an amount that does not fit or is below zero.
  public var micros: Int64? {
    guard let units, currencyCode?.isEmpty == false,
      case (let scaled, false) = units.multipliedReportingOverflow(by: 1_000_000),
      case (let total, false) = scaled.addingReportingOverflow(Int64(nanos ?? 0) / 1000),
      total >= 0
    else { return nil }
    return total
  }
}
