import AppStore
import HTTP
import Postgres
import StorekeeperLogging
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

  /// A genuine signed transaction lacking what settling needs is a proof that does not verify:
  /// the code is `invalid_proof` (as openapi.yaml and SECURITY.md say), its reason in `errors`.
  @Test func anIncompleteTransactionIsAnInvalidProofNamingItsReason() {
    let problem = SettlementRefusal.invalidProof(
      reason: RefusalReason.incompleteTransaction.rawValue, field: "signed_transaction"
    ).problem
    #expect(problem.status == 422 && problem.code == "invalid_proof")
    #expect(
      problem.fields == [FieldError(field: "signed_transaction", message: "incomplete_transaction")]
    )
  }

  /// Transferring a transaction Storekeeper never recorded is 404 with a code of its own.
  @Test func transferringAnUnknownTransactionIsNotFound() {
    let problem = TransferRefusal.transactionNotFound("2000000000000042").problem
    #expect(problem.status == 404 && problem.code == "transaction_not_found")
  }

  @Test func aReusedAdjustmentKeyIsUnprocessable() {
    #expect(AdjustmentRefusal.keyReused.problem.status == 422)
    #expect(AdjustmentRefusal.keyReused.problem.code == "idempotency_key_reused")
  }

  /// PostgreSQL rolled the transaction back to break a conflict: nothing was done, so the client
  /// may send it again (503 with Retry-After), unlike a real fault (500).
  @Test func aDeadlockOrSerializationFailureIsARetryNotAFault() {
    let context = Context(requestId: "r", logger: Logger(label: "test", level: .critical))
    for state in [PostgresError.deadlockDetected, PostgresError.serializationFailure] {
      let problem = APIRouter.map(
        PostgresError(kind: .server, sqlState: state, message: "conflict"), context)
      #expect(problem.status == 503 && problem.code == "conflict_retry", "\(state)")
      #expect(problem.headers["Retry-After"] == "1")
    }
    let fault = APIRouter.map(
      PostgresError(kind: .server, sqlState: PostgresError.checkViolation, message: "no"), context)
    #expect(fault.status == 500)
  }

  @Test func aMissingWebhookEndpointIsNotFound() {
    let problem = WebhookRefusal.endpointNotFound("e1").problem
    #expect(problem.status == 404)
    #expect(problem.code == "webhook_endpoint_not_found")
  }
}
