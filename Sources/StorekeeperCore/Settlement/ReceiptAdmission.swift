import AppStore
import StorekeeperLogging

/// How a receipt gets in, for reports and receipt posts alike: its PKCS#7 check in the gate's
/// CPU lane (queued), a refusal recorded with the proof's hash and size only, else stored as a
/// pending report before Apple is asked, and Apple asked only while its cap allows.
struct ReceiptAdmission: Sendable {
  let verifier: ProofVerifier
  let reports: ReportStore
  let gate: VerificationGate

  /// Where the receipt was stored, and what became of it.
  enum Outcome: Sendable {
    /// Apple answered (or the check alone decided).
    case answered(VerificationResult<[VerifiedTransaction]>, reportId: Int64)
    /// Apple's calls are at their cap: the stored report is the retry worker's.
    case appleBusy(reportId: Int64)
  }

  /// Throws `SettlementRefusal.invalidProof` (after recording the refusal) for a receipt that
  /// fails its local check, and `VerificationBusy` when the CPU lane's queue refuses it.
  func admit(
    _ proof: Proof, receipt: String, tradeNo: String?, userId: String?, productId: String?,
    logger: Logger, fields: [String: LogValue]
  ) async throws -> Outcome {
    let checked = try await gate.withQueuedSlot(.cpu) { verifier.check(receipt: receipt) }
    if let reason = verifier.refusal(of: checked) {
      try await reports.insertRefused(
        tradeNo: tradeNo, userId: userId, productId: productId, proof: proof, code: reason)
      logger.warning(
        "receipt refused before it was stored", fields.merging(["reason": .string(reason)]) { $1 })
      throw SettlementRefusal.invalidProof(reason: reason, field: proof.field)
    }
    let id = try await reports.insertPending(
      tradeNo: tradeNo, userId: userId, productId: productId, proof: proof)
    guard
      let answer = await gate.ifFree(
        .apple, { await verifier.ask(receipt: receipt, checked: checked) })
    else { return .appleBusy(reportId: id) }
    return .answered(answer, reportId: id)
  }
}
