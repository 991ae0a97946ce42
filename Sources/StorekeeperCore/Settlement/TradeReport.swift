/// What the app says about how a purchase ended (`POST /v1/trade-reports`), once the edge has
/// read and checked it.
package enum TradeReport: Sendable, Equatable {
  /// `TRADE_SUCCESS` with Apple's proof.
  case paid(tradeNo: String, proof: Proof)
  /// `TRADE_CLOSED`: cancelled or failed on the device.
  case closed(tradeNo: String, reason: CloseReason)

  /// The reasons a device may give for closing an order.
  package static let deviceCloseReasons: [CloseReason] = [.cancelled, .failed]
}
