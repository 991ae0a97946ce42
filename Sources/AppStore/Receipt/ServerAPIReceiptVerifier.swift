import Foundation
import StorekeeperLogging

/// Verifies a StoreKit 1 app receipt without verifyReceipt: reads the transaction ids from the
/// receipt's PKCS#7 container locally (`AppReceiptReader`, untrusted), asks the App Store
/// Server API for those transactions, and trusts only the JWS it answers, verified exactly
/// like a StoreKit 2 signed transaction (`SignedDataVerifier`).
///
/// One Get Transaction History walk (all pages) from the receipt's first transaction brings
/// its transactions and their later renewals — what verifyReceipt's `latest_receipt_info`
/// used to; Get Transaction Info fetches each receipt transaction the history leaves out
/// (finished consumables). Production is asked first; a transaction production does not know
/// is looked for in the sandbox when sandbox purchases are allowed.
///
/// Outcomes: `valid` with the receipt's transactions and their renewals; `retryable` when
/// Apple is unreachable, times out, answers 429 or 5xx; `misconfigured` (setting `api_key`)
/// on 401; `invalid` for a receipt of another app, a transaction Apple does not know
/// (`server_api_transaction_not_found`), or signed data that does not verify.
public final class ServerAPIReceiptVerifier: Sendable {
  /// History pages read per receipt; a customer with more is read no further (the receipt's
  /// own transactions are still fetched one by one).
  public static let maximumHistoryPages = 50
  /// Transactions fetched one by one per receipt (those the history did not bring).
  public static let maximumLookups = 200

  let client: TransactionLookupClient
  let signed: SignedDataVerifier
  let productionURL: URL
  let sandboxURL: URL
  private let logger: Logger

  public init(
    client: TransactionLookupClient, signed: SignedDataVerifier, productionURL: URL,
    sandboxURL: URL, logger: Logger
  ) {
    self.client = client
    self.signed = signed
    self.productionURL = productionURL
    self.sandboxURL = sandboxURL
    self.logger = logger
  }

  var configuration: AppStoreConfiguration { signed.configuration }

  public func verify(receipt: String) async -> ServerAPIReceiptOutcome {
    guard let data = ReceiptData.repair(receipt), data.utf8.count <= ReceiptData.maximumLength
    else { return .judged(.refused(.malformedReceipt)) }
    guard let contents = AppReceiptReader.read(base64: data) else { return .notAppReceipt }
    return .judged(await judge(contents))
  }

  func judge(_ contents: AppReceiptContents) async -> VerificationResult<VerifiedReceipt> {
    guard contents.bundleId == configuration.bundleId else { return .refused(.bundleIdMismatch) }
    let ids = contents.transactionIds
    guard let first = ids.first else {
      // Nothing bought yet: nothing to ask Apple, nothing to settle.
      return .valid(
        VerifiedReceipt(
          environment: AppStoreEnvironment.production.rawValue, bundleId: contents.bundleId,
          transactions: []))
    }
    // Apple's transaction ids are decimal: anything else is not put in a URL.
    guard ids.allSatisfy(TransactionLookupClient.isValidId) else {
      return .refused(.malformedReceipt)
    }

    // Which environment knows the receipt: production first, the sandbox on its 404.
    var baseURL = productionURL
    var environment = AppStoreEnvironment.production
    var page = await client.historyPage(first, revision: nil, at: baseURL)
    if case .failure(.notFound) = page,
      configuration.allows(environment: AppStoreEnvironment.sandbox.rawValue)
    {
      baseURL = sandboxURL
      environment = .sandbox
      page = await client.historyPage(first, revision: nil, at: baseURL)
    }
    var signedTransactions: [String] = []
    var pages = 0
    while true {
      switch page {
      case .failure(let failure): return outcome(failure, environment: environment)
      case .success(let answer):
        pages += 1
        signedTransactions += answer.signedTransactions
        guard answer.hasMore, let revision = answer.revision, pages < Self.maximumHistoryPages
        else {
          if answer.hasMore {
            logger.warning(
              "transaction history longer than read; the receipt's own transactions are still fetched",
              ["pages": .int(pages)])
          }
          return await finish(
            contents, signedTransactions: signedTransactions, baseURL: baseURL,
            environment: environment)
        }
        page = await client.historyPage(first, revision: revision, at: baseURL)
      }
    }
  }

  /// Verifies the history's transactions, fetches the receipt's missing ones, and keeps the
  /// receipt's transactions and their renewals.
  private func finish(
    _ contents: AppReceiptContents, signedTransactions: [String], baseURL: URL,
    environment: AppStoreEnvironment
  ) async -> VerificationResult<VerifiedReceipt> {
    let receiptIds = Set(contents.transactionIds)
    let originals = Set(contents.purchases.map(\.originalTransactionId))
    var found: [String: VerifiedTransaction] = [:]
    for jws in signedTransactions {
      switch verified(jws) {
      case .valid(let transaction):
        if receiptIds.contains(transaction.transactionId)
          || originals.contains(transaction.originalTransactionId)
        {
          found[transaction.transactionId] = transaction
        }
      case let other: return other.map { _ in Self.unreachable }
      }
    }
    let missing = contents.transactionIds.filter { found[$0] == nil }
    guard missing.count <= Self.maximumLookups else {
      logger.warning(
        "receipt names more transactions outside its history than are looked up one by one",
        ["missing": .int(missing.count), "limit": .int(Self.maximumLookups)])
      return .invalid("server_api_too_many_lookups")
    }
    for id in missing {
      switch await client.transactionInfo(id, at: baseURL) {
      case .failure(let failure): return outcome(failure, environment: environment)
      case .success(let jws):
        switch verified(jws) {
        case .valid(let transaction):
          guard transaction.transactionId == id else {
            return .invalid("server_api_wrong_transaction")
          }
          found[id] = transaction
        case let other: return other.map { _ in Self.unreachable }
        }
      }
    }
    let transactions = found.values.sorted {
      ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId)
    }
    let answered = transactions.first?.environment ?? environment.rawValue
    guard configuration.allows(environment: answered) else {
      return .refused(.environmentNotAllowed)
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
      guard let transaction = payload.verifiedTransaction else {
        return .refused(.malformedPayload)
      }
      return .valid(transaction)
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
