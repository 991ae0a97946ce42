import AppStore

/// One entry point for both kinds of proof; the outcome is the closed enum of `AppStore`.
struct ProofVerifier: Sendable {
  let signed: SignedDataVerifier
  let receipts: ReceiptVerifier

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
      }
    case .receipt(let receipt):
      switch await receipts.verify(receipt: receipt) {
      case .valid(let verified): return .valid(verified.transactions)
      case .invalid(let reason): return .invalid(reason)
      case .retryable(let reason): return .retryable(reason)
      }
    }
  }
}
