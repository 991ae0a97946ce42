import Testing

@testable import StorekeeperCore

@Suite struct OrderStateMachineTests {
  /// The documented table, written out independently: (status, close reason, event) → target.
  static let legal: [String: TradeStatus] = [
    "WAIT_BUYER_PAY/-/paid": .tradeSuccess,
    "WAIT_BUYER_PAY/-/cancelled": .tradeClosed,
    "WAIT_BUYER_PAY/-/failed": .tradeClosed,
    "WAIT_BUYER_PAY/-/expired": .tradeClosed,
    "WAIT_BUYER_PAY/-/verification_gave_up": .waitBuyerPay,
    "TRADE_CLOSED/cancelled/reopened_by_payment": .tradeSuccess,
    "TRADE_CLOSED/failed/reopened_by_payment": .tradeSuccess,
    "TRADE_CLOSED/expired/reopened_by_payment": .tradeSuccess,
    "TRADE_CLOSED/cancelled/verification_gave_up": .tradeClosed,
    "TRADE_CLOSED/failed/verification_gave_up": .tradeClosed,
    "TRADE_CLOSED/expired/verification_gave_up": .tradeClosed,
    "TRADE_SUCCESS/-/refunded": .tradeClosed,
    "TRADE_SUCCESS/-/revoked": .tradeClosed,
    "TRADE_SUCCESS/-/transferred": .tradeClosed,
    "TRADE_CLOSED/refunded/refund_reversed": .tradeSuccess,
    "TRADE_CLOSED/revoked/refund_reversed": .tradeSuccess,
  ]

  static var states: [(TradeStatus, CloseReason?)] {
    [(.waitBuyerPay, nil), (.tradeSuccess, nil)] + CloseReason.allCases.map { (.tradeClosed, $0) }
  }

  @Test func allowsExactlyTheDocumentedTransitions() {
    var allowed = 0
    for (status, close) in Self.states {
      for reason in OrderEventReason.allCases {
        let key = "\(status.rawValue)/\(close?.rawValue ?? "-")/\(reason.rawValue)"
        let result = try? OrderStateMachine.transition(from: status, closeReason: close, on: reason)
        #expect(result?.to == Self.legal[key], "\(key)")
        if let result {
          allowed += 1
          #expect(result.from == status)
          #expect(result.reason == reason)
          #expect((result.closeReason != nil) == (result.to == .tradeClosed), "\(key)")
        }
      }
    }
    #expect(allowed == Self.legal.count)
  }

  @Test func closingRecordsTheReasonAsTheOrdersCloseReason() throws {
    let expired = try OrderStateMachine.transition(
      from: .waitBuyerPay, closeReason: nil, on: .expired)
    #expect(expired.closeReason == .expired)
    let refund = try OrderStateMachine.transition(
      from: .tradeSuccess, closeReason: nil, on: .refunded)
    #expect(refund.closeReason == .refunded)
    let reopened = try OrderStateMachine.transition(
      from: .tradeClosed, closeReason: .expired, on: .reopenedByPayment)
    #expect(reopened.closeReason == nil)
  }

  @Test func aPaymentReopensOnlyWhatWasNeverPaid() {
    #expect(OrderStateMachine.paymentReason(for: .waitBuyerPay) == .paid)
    #expect(OrderStateMachine.paymentReason(for: .tradeClosed) == .reopenedByPayment)
    #expect(throws: OrderStateMachine.Refused.self) {
      try OrderStateMachine.transition(
        from: .tradeClosed, closeReason: .refunded, on: .reopenedByPayment)
    }
    #expect(throws: OrderStateMachine.Refused.self) {
      try OrderStateMachine.transition(from: .waitBuyerPay, closeReason: nil, on: .created)
    }
  }
}
