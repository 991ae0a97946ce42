import AppStore
import Postgres
import StorekeeperLogging

extension ReceiptService {
  /// Records the purchases a report's receipt holds beside the one that paid its order: of
  /// the order's product, never seen here, not refunded, bought with the order's token or
  /// none. The app bought twice with one order (a double tap, an Ask to Buy approved after the
  /// user bought again) and reports the second with the trade number it kept, or one receipt
  /// holds both: the matcher answers the order with the purchase that paid it, and Apple's
  /// second charge would be lost for good (a finished consumable leaves the receipt). Each is
  /// recorded for the order's user as a restore records it: it pays their open order for the
  /// product, or the order its token names gets a second order of its own, or one is made.
  /// Renewals of a subscription are the renewal path's, and a signed transaction holds one
  /// purchase, so only a receipt for another kind of product has any.
  func recordUnseen(
    _ transactions: [VerifiedTransaction], of order: Order, product: Product, logger: Logger
  ) async -> [ReceiptOutcome.Item] {
    guard transactions.count > 1, product.type != .autoRenewable else { return [] }
    let token = order.appAccountToken.lowercased()
    let beside = transactions.filter {
      $0.productId == order.productId && $0.transactionId != order.transactionId
        && $0.revocationDate == nil
        && ($0.appAccountToken == nil || $0.appAccountToken?.lowercased() == token)
    }
    guard !beside.isEmpty else { return [] }
    var recorded: [ReceiptOutcome.Item] = []
    let seen: Set<String>
    do {
      // A non-renewing pass bought every month lists every earlier one: one round trip.
      seen = Set(
        try await orders.database.query(
          """
          SELECT transaction_id FROM apple_transactions
          WHERE transaction_id = ANY(\(PostgresArray(beside.map(\.transactionId)))::text[])
          """
        ).map { try $0.decode("transaction_id", as: String.self) })
    } catch {
      logger.error(
        "the purchases a report's receipt lists beside its order's could not be read",
        ["error": .string(String(describing: error))])
      return []
    }
    for transaction in beside.sorted(by: { $0.purchaseDate < $1.purchaseDate })
    where !seen.contains(transaction.transactionId) {
      do {
        let (item, _, _) = try await recordOnce(transaction, userId: order.userId)
        recorded.append(item)
        logger.notice(
          "a second purchase in the report's receipt recorded",
          [
            "transaction_id": .string(transaction.transactionId),
            "status": .string(item.status.rawValue),
            "trade_no": .string(item.tradeNo.map(LogRedaction.tradeNumber) ?? ""),
          ])
      } catch {
        // The order is paid and answered; a restore (`POST /v1/receipts`) records this
        // purchase later, as it records every one its proof holds.
        logger.error(
          "a second purchase in the report's receipt could not be recorded",
          [
            "transaction_id": .string(transaction.transactionId),
            "error": .string(String(describing: error)),
          ])
      }
    }
    return recorded
  }
}
