import HTTP
import StorekeeperCore
import StorekeeperLogging

/// `/admin/v1/transactions/{transaction_id}/transfer`: an admin moves a purchase to another
/// user (support cases: a user who changed accounts). Nothing else ever changes who owns one.
package struct AdminTransactionRoutes: Sendable {
  let auth: AdminAuthenticator
  let transfers: TransferService

  package init(auth: AdminAuthenticator, transfers: TransferService) {
    self.auth = auth
    self.transfers = transfers
  }

  package func register(_ router: inout APIRouter) {
    router.add(.post, "/admin/v1/transactions/{transaction_id}/transfer") {
      request, context in
      let actor = try auth.authenticate(request, context)
      let admin = actor.name
      let transactionId = context.parameters["transaction_id"] ?? ""
      guard !transactionId.isEmpty, transactionId.count <= 64,
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
          "admin": .string(admin), "transaction_id": .string(transactionId),
          "to_user_id": .string(userId),
          "trade_no": .string(LogRedaction.tradeNumber(result.order.tradeNo)),
        ])
      return try JSONCoding.response(result)
    }
  }
}
