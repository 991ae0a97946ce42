/// The one table of what may happen to an order. Every writer of `orders.trade_status` asks it
/// first (through `OrderRepository.transition`), so a refused move is a bug caught before any
/// SQL runs, not a row in a state nobody planned for.
///
/// | reason | from | to |
/// |---|---|---|
/// | `created`, `created_for_receipt`, `created_for_renewal`, `created_for_transfer` | (none) | `WAIT_BUYER_PAY` |
/// | `paid` | `WAIT_BUYER_PAY` | `TRADE_SUCCESS` |
/// | `reopened_by_payment` | `TRADE_CLOSED` (cancelled, failed, expired) | `TRADE_SUCCESS` |
/// | `cancelled`, `failed`, `expired` | `WAIT_BUYER_PAY` | `TRADE_CLOSED` |
/// | `refunded`, `revoked`, `transferred` | `TRADE_SUCCESS` | `TRADE_CLOSED` |
/// | `refund_reversed` | `TRADE_CLOSED` (refunded, revoked) | `TRADE_SUCCESS` |
/// | `verification_gave_up` | `WAIT_BUYER_PAY` or `TRADE_CLOSED` (cancelled, failed, expired) | unchanged |
///
/// A paid purchase is never lost (a late payment reopens a closed order) and a refund is never
/// hidden (only Apple's reversal undoes it).
package enum OrderStateMachine {
  package struct Refused: Error, Equatable, CustomStringConvertible {
    var from: TradeStatus
    var closeReason: CloseReason?
    var reason: OrderEventReason

    package var description: String {
      "an order in \(from.rawValue)\(closeReason.map { " (\($0.rawValue))" } ?? "") cannot take '\(reason.rawValue)'"
    }
  }

  /// The reasons that create an order; they have no `from`.
  static let creations: Set<OrderEventReason> = [
    .created, .createdForReceipt, .createdForRenewal, .createdForTransfer,
  ]

  /// The move `reason` makes from `status` (with its current close reason), or `Refused`.
  static func transition(
    from status: TradeStatus, closeReason: CloseReason?, on reason: OrderEventReason
  ) throws(Refused) -> OrderTransition {
    let refused = Refused(from: status, closeReason: closeReason, reason: reason)
    let payable =
      status == .waitBuyerPay || (status == .tradeClosed && closeReason?.isPayable == true)
    switch reason {
    case .created, .createdForReceipt, .createdForRenewal, .createdForTransfer:
      throw refused
    case .paid:
      guard status == .waitBuyerPay else { throw refused }
      return OrderTransition(from: status, to: .tradeSuccess, reason: reason)
    case .reopenedByPayment:
      guard status == .tradeClosed, closeReason?.isPayable == true else { throw refused }
      return OrderTransition(from: status, to: .tradeSuccess, reason: reason)
    case .cancelled, .failed, .expired:
      guard status == .waitBuyerPay else { throw refused }
      return OrderTransition(
        from: status, to: .tradeClosed, reason: reason,
        closeReason: CloseReason(rawValue: reason.rawValue))
    case .refunded, .revoked, .transferred:
      guard status == .tradeSuccess else { throw refused }
      return OrderTransition(
        from: status, to: .tradeClosed, reason: reason,
        closeReason: CloseReason(rawValue: reason.rawValue))
    case .refundReversed:
      guard status == .tradeClosed, closeReason == .refunded || closeReason == .revoked else {
        throw refused
      }
      return OrderTransition(from: status, to: .tradeSuccess, reason: reason)
    case .verificationGaveUp:
      guard payable else { throw refused }
      return OrderTransition(from: status, to: status, reason: reason, closeReason: closeReason)
    }
  }

  /// The reason a verified payment records on an order in `status`: `paid`, or
  /// `reopened_by_payment` for an order closed before it was paid.
  static func paymentReason(for status: TradeStatus) -> OrderEventReason {
    status == .tradeClosed ? .reopenedByPayment : .paid
  }
}
