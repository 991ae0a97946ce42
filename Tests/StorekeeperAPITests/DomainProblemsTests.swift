import HTTP
import Testing

@testable import StorekeeperAPI
@testable import StorekeeperCore

/// The domain's refusals as the API answers them (`DomainProblems`, the one place that maps
/// them).
@Suite struct DomainProblemsTests {
  @Test func anOrderPaidByATransferredPurchaseIsAConflict() {
    let refusal = SettlementRefusal.orderTransferred(tradeNo: "T1")
    #expect(refusal.problem.status == 409)
    #expect(refusal.problem.code == "order_transferred")
  }

  @Test func aReusedAdjustmentKeyIsUnprocessable() {
    #expect(AdjustmentRefusal.keyReused.problem.status == 422)
    #expect(AdjustmentRefusal.keyReused.problem.code == "idempotency_key_reused")
  }

  @Test func aMissingWebhookEndpointIsNotFound() {
    let problem = WebhookRefusal.endpointNotFound("e1").problem
    #expect(problem.status == 404)
    #expect(problem.code == "webhook_endpoint_not_found")
  }
}
