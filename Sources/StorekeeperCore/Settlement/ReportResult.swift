/// How a trade report ended when it did not end in a `SettlementRefusal`.
package enum ReportResult: Sendable {
  /// Paid (now, or by this same proof before): the order and what it delivers.
  case settled(SettledOrder)
  /// Apple could not be asked; the retry worker owns the report now.
  case pending(PendingVerification)
  /// A close report: the order as it stands (closed now, or already before).
  case closed(Order)
}
