import AppStore

/// One entry point for both kinds of proof; the outcome is the closed enum of `AppStore`.
/// What verifyReceipt says about this server's own settings goes to `appleSettings` on the
/// way, so operators see it whichever path asked.
///
/// An app receipt's PKCS#7 signature is checked first, in every mode: a receipt Apple did not
/// sign for this app is refused before anyone is asked about it.
package struct ProofVerifier: Sendable {
  package let signed: SignedDataVerifier
  let appReceipts: AppReceiptSignatureVerifier
  let receipts: ReceiptVerifier
  let appleSettings: AppleConfigurationMonitor
  /// Set when receipts are asked of the App Store Server API first (`APPLE_RECEIPT_VERIFICATION`).
  package var serverAPI: ServerAPIReceiptVerifier? = nil
  /// `server_api`: a receipt the Server API cannot read is refused, never sent to verifyReceipt.
  package var serverAPIOnly = false

  package init(
    signed: SignedDataVerifier, appReceipts: AppReceiptSignatureVerifier, receipts: ReceiptVerifier,
    appleSettings: AppleConfigurationMonitor, serverAPI: ServerAPIReceiptVerifier? = nil,
    serverAPIOnly: Bool = false
  ) {
    self.signed = signed
    self.appReceipts = appReceipts
    self.receipts = receipts
    self.appleSettings = appleSettings
    self.serverAPI = serverAPI
    self.serverAPIOnly = serverAPIOnly
  }

  // Each step is its own call, so callers hold a slot of `VerificationGate` for the CPU step
  // only: `ReceiptAdmission` for requests, `verify(_:waitingAt:)` for the retry worker.

  /// A signed transaction's whole check, offline and CPU-bound: ES256 over its certificate
  /// chain and its payload.
  func verifySigned(_ jws: String) -> VerificationResult<[VerifiedTransaction]> {
    switch signed.verifyTransaction(jws) {
    case .valid(let payload):
      do { return .valid([try payload.requireSettleable()]) } catch {
        return .invalid(error.rawValue)
      }
    case .invalid(let reason): return .invalid(reason)
    case .retryable(let reason): return .retryable(reason)
    case .misconfigured(let problem): return .misconfigured(problem)
    }
  }

  /// A receipt's CPU step: its PKCS#7 signature, before anything is stored or asked.
  func check(receipt: String) -> AppReceiptCheck { appReceipts.check(base64: receipt) }

  /// Why a checked receipt is refused before it is stored (one Apple did not sign for this
  /// app, base64 that is none, an iOS 6 receipt where only the Server API judges receipts), or
  /// nil when it may be stored and sent to Apple.
  func refusal(of check: AppReceiptCheck) -> String? {
    switch check {
    case .refused(let reason): return reason.rawValue
    case .notAppReceipt: return serverAPI != nil && serverAPIOnly ? "not_an_app_receipt" : nil
    case .signed: return nil
    }
  }

  /// Apple's part of judging a receipt already checked (`check(receipt:)`): the network call.
  func ask(receipt: String, checked: AppReceiptCheck) async
    -> VerificationResult<[VerifiedTransaction]>
  {
    let (answer, path) = await verifyReceipt(receipt, checked: checked)
    switch answer {
    case .valid(let verified):
      appleSettings.resolved(environment: verified.environment, settings: path)
      return .valid(verified.transactions)
    case .invalid(let reason): return .invalid(reason)
    case .retryable(let reason): return .retryable(reason)
    case .misconfigured(let problem):
      appleSettings.record(problem)
      return .misconfigured(problem)
    }
  }

  /// The Server API for signed app receipts when configured; verifyReceipt for the rest (iOS
  /// 6-style transaction receipts carry no PKCS#7 container) unless it is off. Also returns the
  /// settings of the path that answered, which a valid answer proves right.
  private func verifyReceipt(_ receipt: String, checked: AppReceiptCheck) async -> (
    VerificationResult<VerifiedReceipt>, Set<Misconfiguration.Setting>
  ) {
    let verifyReceiptSettings: Set<Misconfiguration.Setting> = [
      .sharedSecret, .verifyReceiptURL, .verifyReceiptSandboxURL,
    ]
    switch checked {
    case .refused(let reason):
      return (.invalid(reason.rawValue), [])
    case .signed(let signedReceipt):
      guard let serverAPI else {
        return (await receipts.verify(receipt: receipt, appleSigned: true), verifyReceiptSettings)
      }
      let result = await serverAPI.verify(signedReceipt)
      // A receipt with nothing bought asks Apple nothing, so proves nothing about the key.
      return (result, result.value?.transactions.isEmpty == true ? [] : [.apiKey])
    case .notAppReceipt:
      if serverAPI != nil, serverAPIOnly { return (.invalid("not_an_app_receipt"), []) }
      return (await receipts.verify(receipt: receipt), verifyReceiptSettings)
    }
  }
}
