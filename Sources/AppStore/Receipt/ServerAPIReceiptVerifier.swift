import Foundation
import StorekeeperLogging

/// Judges a StoreKit 1 app receipt without verifyReceipt. The receipt must come signed
/// (`SignedAppReceipt`, from `AppReceiptSignatureVerifier`): its transactions are only
/// candidates, and what pays is the App Store Server API's JWS about them, verified exactly
/// like a StoreKit 2 signed transaction (`SignedDataVerifier`).
///
/// One Get Transaction History walk from a transaction the receipt lists brings its
/// transactions and their later renewals — what verifyReceipt's `latest_receipt_info` used
/// to; Get Transaction Info fetches each listed transaction the history leaves out (finished
/// consumables). An answer is kept only when it is a transaction the receipt lists, matching
/// what the receipt says of it (its original transaction and product), or a later period of a
/// subscription whose original transaction the receipt lists. Production is asked first; a
/// transaction production does not know is looked for in the sandbox when sandbox purchases
/// are allowed.
///
/// Every receipt is allowed at most `callLimit` calls to Apple (Apple allows the app about 50
/// a second in all): at most half of them for history pages, the rest for lookups. A receipt
/// that reaches its limit is judged on what was confirmed by then; the rest of it pays
/// nothing this time, and the log and `metrics` say so.
///
/// Outcomes: `valid`; `retryable` when Apple is unreachable, times out, answers 429 or 5xx
/// or an error it documents as "try again" (a 404 4040002 right after a purchase);
/// `misconfigured` (setting `api_key`) on 401; `invalid` for a transaction Apple does not know
/// (`server_api_transaction_not_found`), an answer that contradicts the receipt
/// (`server_api_receipt_mismatch`), or signed data that does not verify.
public final class ServerAPIReceiptVerifier: Sendable {
  public static let defaultCallLimit = 20

  let client: TransactionLookupClient
  let signed: SignedDataVerifier
  let productionURL: URL
  let sandboxURL: URL
  public let callLimit: Int
  public let metrics: ServerAPIReceiptMetrics
  private let logger: Logger

  public init(
    client: TransactionLookupClient, signed: SignedDataVerifier, productionURL: URL,
    sandboxURL: URL, callLimit: Int = ServerAPIReceiptVerifier.defaultCallLimit,
    metrics: ServerAPIReceiptMetrics = ServerAPIReceiptMetrics(), logger: Logger
  ) {
    self.client = client
    self.signed = signed
    self.productionURL = productionURL
    self.sandboxURL = sandboxURL
    self.callLimit = max(2, callLimit)
    self.metrics = metrics
    self.logger = logger
  }

  var configuration: AppStoreConfiguration { signed.configuration }

  public func verify(_ receipt: SignedAppReceipt) async -> VerificationResult<VerifiedReceipt> {
    let contents = receipt.contents
    guard contents.bundleId == configuration.bundleId else { return .refused(.bundleIdMismatch) }
    guard let first = contents.purchases.first else {
      // Nothing bought yet: nothing to ask Apple, nothing to settle.
      return .valid(
        VerifiedReceipt(
          environment: AppStoreEnvironment.production.rawValue, bundleId: contents.bundleId,
          transactions: []))
    }
    // Apple's transaction ids are decimal: anything else is not put in a URL.
    guard
      contents.purchases.allSatisfy({
        TransactionLookupClient.isValidId($0.transactionId)
          && TransactionLookupClient.isValidId($0.originalTransactionId)
      })
    else { return .refused(.malformedReceipt) }

    var walk = ReceiptWalk(contents: contents, limit: callLimit)
    // Which environment knows the receipt: production first, the sandbox on its 404.
    let start = first.originalTransactionId
    var baseURL = productionURL
    var environment = AppStoreEnvironment.production
    walk.spend(metrics)
    var page = await client.historyPage(start, revision: nil, at: baseURL)
    if case .failure(.notFound) = page {
      if configuration.allows(environment: AppStoreEnvironment.sandbox.rawValue) {
        baseURL = sandboxURL
        environment = .sandbox
        walk.spend(metrics)
        page = await client.historyPage(start, revision: nil, at: baseURL)
      } else {
        // The sandbox is not asked, so its purchases look unknown here: the operator must hear
        // why, as a signed sandbox transaction's refusal says (App Review buys in the sandbox).
        logger.warning(
          "receipt unknown to the App Store's production environment, and APPLE_ENVIRONMENTS does not let the sandbox be asked",
          [
            "environment": "Production", "setting": "APPLE_ENVIRONMENTS",
            "accepted": .string(
              configuration.allowedEnvironments.map { $0.lowercased() }.sorted().joined(
                separator: ",")),
            "hint": .string(AppStoreConfiguration.sandboxHint),
          ])
      }
    }
    while true {
      let answer: TransactionHistoryPage
      switch page {
      case .failure(let failure): return outcome(failure, environment: environment)
      case .success(let read): answer = read
      }
      for jws in answer.signedTransactions {
        switch verified(jws) {
        case .valid(let transaction):
          if let refusal = walk.keep(transaction) { return refusal }
        case let other: return other.map { _ in Self.unreachable }
        }
      }
      guard answer.hasMore, let revision = answer.revision else { break }
      guard walk.mayReadHistory else {
        logger.warning(
          "transaction history longer than its share of the receipt's Apple calls; the receipt's own transactions are still fetched",
          ["calls": .int(walk.calls), "limit": .int(callLimit)])
        break
      }
      walk.spend(metrics)
      page = await client.historyPage(start, revision: revision, at: baseURL)
    }
    for id in walk.missing {
      guard walk.mayLookUp else {
        metrics.reachedLimit()
        logger.warning(
          "receipt reached its limit of Apple calls; its other transactions pay nothing this time",
          [
            "limit": .int(callLimit), "confirmed": .int(walk.found.count),
            "unconfirmed": .int(walk.missing.count),
          ])
        break
      }
      walk.spend(metrics)
      switch await client.transactionInfo(id, at: baseURL) {
      case .failure(let failure): return outcome(failure, environment: environment)
      case .success(let jws):
        switch verified(jws) {
        case .valid(let transaction):
          guard transaction.transactionId == id else {
            return .invalid("server_api_wrong_transaction")
          }
          if let refusal = walk.keep(transaction) { return refusal }
        case let other: return other.map { _ in Self.unreachable }
        }
      }
    }
    let transactions = walk.found.values.sorted {
      ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId)
    }
    let answered = transactions.first?.environment ?? environment.rawValue
    guard configuration.allows(environment: answered) else {
      return configuration.refuseEnvironment(answered, logger: logger)
    }
    return .valid(
      VerifiedReceipt(
        environment: answered, bundleId: contents.bundleId, format: .app,
        transactions: transactions))
  }

  /// Never read: `map` of a result that is not `valid`.
  private static let unreachable = VerifiedReceipt(
    environment: "", bundleId: "", transactions: [])

  private func verified(_ jws: String) -> VerificationResult<VerifiedTransaction> {
    switch signed.verifyTransaction(jws) {
    case .valid(let payload):
      do { return .valid(try payload.requireSettleable()) } catch { return .refused(error) }
    case .invalid(let reason): return .invalid(reason)
    case .retryable(let reason): return .retryable(reason)
    case .misconfigured(let problem): return .misconfigured(problem)
    }
  }

  private func outcome(_ failure: TransactionLookupFailure, environment: AppStoreEnvironment)
    -> VerificationResult<VerifiedReceipt>
  {
    switch failure {
    case .retryable(let reason):
      logger.warning(
        "App Store Server API unavailable",
        ["environment": .string(environment.rawValue), "reason": .string(reason)])
      return .retryable(reason)
    case .unauthorized:
      return .misconfigured(
        Misconfiguration(setting: .apiKey, status: 401, environment: environment.rawValue))
    case .notFound:
      return .invalid("server_api_transaction_not_found")
    case .refused(let status, let message):
      logger.warning(
        "App Store Server API refused a lookup",
        ["http_status": .int(status), "detail": .string(message)])
      return .invalid("server_api_\(status)")
    }
  }
}
