import AppStore
import StorekeeperLogging

/// How a receipt gets in, for reports and receipt posts alike: its PKCS#7 check in the gate's
/// CPU lane (queued), a refusal recorded with the proof's hash and size only, else stored as a
/// pending report before Apple is asked, and Apple asked only while its cap allows — or, for a
/// post that waits for Apple, once a slot comes free within the queue's timeout.
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
  /// `waitsForApple`: a userless post, whose client hears of its content now or never, waits in
  /// the Apple lane's queue instead of being answered pending at once; with that queue full it
  /// throws `VerificationBusy` before anything is stored, as the CPU lane does.
  func admit(
    _ proof: Proof, receipt: String, tradeNo: String?, userId: String?, productId: String?,
    waitsForApple: Bool = false, logger: Logger, fields: [String: LogValue]
  ) async throws -> Outcome {
    let checked = try await gate.withQueuedSlot(.cpu) { verifier.check(receipt: receipt) }
    if let reason = verifier.refusal(of: checked) {
      try await reports.insertRefused(
        tradeNo: tradeNo, userId: userId, productId: productId, proof: proof, code: reason)
      logger.warning(
        "receipt refused before it was stored", fields.merging(["reason": .string(reason)]) { $1 })
      throw SettlementRefusal.invalidProof(reason: reason, field: proof.field)
    }
    if waitsForApple { try gate.requireRoom(.apple) }
    let id = try await reports.insertPending(
      tradeNo: tradeNo, userId: userId, productId: productId, proof: proof)
    let ask = { await verifier.ask(receipt: receipt, checked: checked) }
    // The slot is taken after the insert, so none is held across database work.
    let answer = await (waitsForApple ? gate.afterWaiting(.apple, ask) : gate.ifFree(.apple, ask))
    guard let answer else { return .appleBusy(reportId: id) }
    return .answered(answer, reportId: id)
  }
}
