import HTTP
import StorekeeperCore
import StorekeeperLogging

/// `/admin/v1/transactions/{transaction_id}/transfer`: an admin moves a purchase to another
/// user (support cases: a user who changed accounts). Nothing else ever changes who owns one.
/// `GET /admin/v1/transactions?app_transaction_id=…` finds the purchases, and their users, of
/// one Apple Account's download of the app.
package struct AdminTransactionRoutes: Sendable {
  let auth: AdminAuthenticator
  let transfers: TransferService
  let history: UserHistory

  package init(auth: AdminAuthenticator, transfers: TransferService, history: UserHistory) {
    self.auth = auth
    self.transfers = transfers
    self.history = history
  }

  package func register(_ router: inout APIRouter) {
    router.add(.get, "/admin/v1/transactions") { request, context in
      _ = try auth.authenticate(request, context)
      var problems: [FieldError] = []
      let page = PageRequest(
        request.query, known: ["app_transaction_id"], problems: &problems,
        cursorRule: "must be a transaction id (1-64 printable characters)",
        isKey: AdminUserRoutes.isTransactionId)
      // Only one filter, and it is required: the listing is a lookup, never a scan of every
      // purchase.
      let appTransactionId = request.query["app_transaction_id"]
      if let appTransactionId {
        if !Self.isDecimalId(appTransactionId) {
          problems.append(FieldError(field: "app_transaction_id", message: "must be 1-64 digits"))
        }
      } else {
        problems.append(FieldError(field: "app_transaction_id", message: "is required"))
      }
      try PageRequest.check(problems)
      let split = try await history.transactions(
        appTransactionId: appTransactionId ?? "", after: page.after, limit: page.limit)
      return try JSONCoding.response(ListPage("transactions", split.items, next: split.next))
    }
    router.add(.post, "/admin/v1/transactions/{transaction_id}/transfer") {
      request, context in
      let actor = try auth.authenticate(request, context)
      let admin = actor.name
      let transactionId = context.parameters["transaction_id"] ?? ""
      // A Google purchase Google names no order for (a promo code's) goes by its purchase token,
      // hundreds of characters: the bound is a token's, not an Apple id's.
      guard !transactionId.isEmpty, transactionId.utf8.count <= Proof.maxPurchaseTokenCharacters,
        transactionId.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
      else {
        throw TransferRefusal.transactionNotFound(String(transactionId.prefix(64))).problem
      }
      var fields = try RequestFields(request: request)
      fields.rejectUnknown(allowed: ["to_user_id", "reason"])
      let userId = fields.string("to_user_id", required: true, maxLength: 128)
      if let userId, !UserId.isValid(userId) {
        fields.fail("to_user_id", "must be 1-128 printable characters")
      }
      let reason = fields.string("reason", maxLength: 500)
      try fields.validate()
      guard let userId else { throw HTTPError(400, code: "validation_failed") }
      let result = try await transfers.transfer(
        transactionId, to: userId, by: admin, reason: reason, audit: actor)
      context.logger.notice(
        "purchase transferred",
        [
          "admin": .string(admin),
          "transaction_id": .string(LogRedaction.transactionId(transactionId)),
          "to_user_id": .string(userId),
          "trade_no": .string(LogRedaction.tradeNumber(result.order.tradeNo)),
        ])
      return try JSONCoding.response(result)
    }
  }

  static func isDecimalId(_ text: String) -> Bool {
    !text.isEmpty && text.utf8.count <= 64
      && text.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
  }
}
