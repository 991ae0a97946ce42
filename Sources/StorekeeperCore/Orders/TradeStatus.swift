import Postgres

/// Where an order stands (Alipay's names, as the seeds use them). The legal moves between these
/// are `OrderStateMachine`'s table.
package enum TradeStatus: String, Codable, Sendable, CaseIterable, PostgresEnum {
  case waitBuyerPay = "WAIT_BUYER_PAY"
  case tradeSuccess = "TRADE_SUCCESS"
  case tradeClosed = "TRADE_CLOSED"
}
