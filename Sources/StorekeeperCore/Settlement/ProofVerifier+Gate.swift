import AppStore

/// Verifying for background work within the gate's lanes: each step waits for a slot of its
/// own lane (nobody waits on the worker), and no slot is held while the other step runs.
extension ProofVerifier {
  package func verify(_ proof: Proof, waitingAt gate: VerificationGate) async
    -> VerificationResult<[VerifiedTransaction]>
  {
    switch proof {
    case .signedTransaction(let jws):
      return await gate.waitingForSlot(.cpu) { verifySigned(jws) }
    case .receipt(let receipt):
      let checked = await gate.waitingForSlot(.cpu) { check(receipt: receipt) }
      return await gate.waitingForSlot(.apple) { await ask(receipt: receipt, checked: checked) }
    case .googlePurchase:
      // Apple cannot judge Google's tokens; the retry worker hands them to `GoogleSettlement`
      // before it gets here.
      return .invalid("not_an_apple_proof")
    }
  }
}
