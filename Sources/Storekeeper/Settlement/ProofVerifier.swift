import AppStore

/// One entry point for both kinds of proof; the outcome is the closed enum of `AppStore`.
/// What verifyReceipt says about this server's own settings goes to `appleSettings` on the
/// way, so operators see it whichever path asked.
struct ProofVerifier: Sendable {
  let signed: SignedDataVerifier
  let receipts: ReceiptVerifier
  let appleSettings: AppleConfigurationMonitor

  func verify(_ proof: Proof) async -> VerificationResult<[VerifiedTransaction]> {
    switch proof {
    case .signedTransaction(let jws):
      switch signed.verifyTransaction(jws) {
      case .valid(let payload):
        guard let transaction = payload.verifiedTransaction else {
          return .invalid("malformed_payload")
        }
        return .valid([transaction])
      case .invalid(let reason): return .invalid(reason)
      case .retryable(let reason): return .retryable(reason)
      case .misconfigured(let problem): return .misconfigured(problem)
      }
    case .receipt(let receipt):
      switch await receipts.verify(receipt: receipt) {
      case .valid(let verified):
        appleSettings.resolved(environment: verified.environment)
        return .valid(verified.transactions)
      case .invalid(let reason): return .invalid(reason)
      case .retryable(let reason): return .retryable(reason)
      case .misconfigured(let problem):
        appleSettings.record(problem)
        return .misconfigured(problem)
      }
    }
  }
}
