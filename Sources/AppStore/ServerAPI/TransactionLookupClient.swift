import Foundation

/// Get Transaction Info (`GET /inApps/v1/transactions/{transactionId}`) and Get Transaction
/// History (`GET /inApps/v2/history/{transactionId}`) of the App Store Server API: Apple's
/// signed word about transactions a StoreKit 1 receipt names, now that verifyReceipt is
/// deprecated. Each call is against one environment's base URL; which one is the caller's
/// choice (production first, then sandbox, as Apple advises).
public struct TransactionLookupClient: Sendable {
  /// Apple's transaction ids are decimal; anything else read from a receipt is not sent.
  public static let maximumIdLength = 64

  let api: AppStoreServerAPI

  public init(
    key: AppStoreAPIKey, bundleId: String,
    transport: any ReceiptTransport = HTTPReceiptTransport(), timeout: Duration = .seconds(10)
  ) {
    api = AppStoreServerAPI(key: key, bundleId: bundleId, transport: transport, timeout: timeout)
  }

  /// Whether `id` may be put in a request path.
  public static func isValidId(_ id: String) -> Bool {
    !id.isEmpty && id.utf8.count <= maximumIdLength
      && id.utf8.allSatisfy { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
  }

  /// The transaction's `signedTransactionInfo`.
  public func transactionInfo(_ transactionId: String, at baseURL: URL) async -> Result<
    String, TransactionLookupFailure
  > {
    struct Answer: Decodable { var signedTransactionInfo: String }
    guard Self.isValidId(transactionId) else { return .failure(Self.invalidId) }
    return await api.send(
      "inApps/v1/transactions/" + transactionId, at: baseURL, as: Answer.self
    ).map(\.signedTransactionInfo).mapError(Self.failure)
  }

  /// One page of the customer's transaction history, newest first; `revision` from the
  /// previous page asks for the next. Newest first so that a receipt's limit of calls cuts
  /// off the oldest transactions, those long since recorded, and never the purchase being
  /// reported (a weekly subscriber of four years has over 200).
  public func historyPage(_ transactionId: String, revision: String?, at baseURL: URL) async
    -> Result<TransactionHistoryPage, TransactionLookupFailure>
  {
    guard Self.isValidId(transactionId) else { return .failure(Self.invalidId) }
    var query = [URLQueryItem(name: "sort", value: "DESCENDING")]
    if let revision { query.append(URLQueryItem(name: "revision", value: revision)) }
    return await api.send(
      "inApps/v2/history/" + transactionId, query: query, at: baseURL,
      as: TransactionHistoryPage.self
    ).mapError(Self.failure)
  }

  private static let invalidId = TransactionLookupFailure.refused(
    status: 400, "invalid transaction id")

  /// The reasons are stable words: the receipt verifier returns them as its retryable reason.
  private static func failure(_ failure: AppStoreServerAPIFailure) -> TransactionLookupFailure {
    switch failure {
    case .unsigned, .answered(status: 401, _): return .unauthorized
    case .unbuildable: return .refused(status: 400, "could not build the request")
    case .unreachable(ReceiptTransportError.timedOut): return .retryable("server_api_timeout")
    case .unreachable: return .retryable("server_api_unreachable")
    case .unreadable: return .retryable("server_api_bad_response")
    case .rateLimited: return .retryable("server_api_http_429")
    case .answered(let status, let error)
    where AppStoreServerAPIFailure.isRetryable(status: status, error):
      return .retryable("server_api_http_\(status)")
    case .answered(status: 404, _): return .notFound
    case .answered(let status, let error):
      return .refused(status: status, error?.errorMessage ?? "no detail")
    }
  }
}
