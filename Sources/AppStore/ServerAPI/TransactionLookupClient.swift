import Foundation

/// Get Transaction Info (`GET /inApps/v1/transactions/{transactionId}`) and Get Transaction
/// History (`GET /inApps/v2/history/{transactionId}`) of the App Store Server API: Apple's
/// signed word about transactions a StoreKit 1 receipt names, now that verifyReceipt is
/// deprecated. Each call is against one environment's base URL; which one is the caller's
/// choice (production first, then sandbox, as Apple advises).
public struct TransactionLookupClient: Sendable {
  /// Apple's: production and sandbox.
  public static let productionURL = NotificationHistoryClient.productionURL
  public static let sandboxURL = URL(string: "https://api.storekit-sandbox.itunes.apple.com")!
  /// Apple's transaction ids are decimal; anything else read from a receipt is not sent.
  public static let maximumIdLength = 64

  let key: AppStoreAPIKey
  let bundleId: String
  let transport: any ReceiptTransport
  let timeout: Duration

  public init(
    key: AppStoreAPIKey, bundleId: String,
    transport: any ReceiptTransport = URLSessionReceiptTransport(), timeout: Duration = .seconds(10)
  ) {
    self.key = key
    self.bundleId = bundleId
    self.transport = transport
    self.timeout = timeout
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
    return await get(
      baseURL, path: "inApps/v1/transactions/" + transactionId, query: [], id: transactionId
    ).flatMap { (body: [UInt8]) in
      guard let answer = try? JSONDecoder().decode(Answer.self, from: Data(body)) else {
        return .failure(.retryable("server_api_bad_response"))
      }
      return .success(answer.signedTransactionInfo)
    }
  }

  /// One page of the customer's transaction history, oldest first; `revision` from the
  /// previous page asks for the next.
  public func historyPage(_ transactionId: String, revision: String?, at baseURL: URL) async
    -> Result<TransactionHistoryPage, TransactionLookupFailure>
  {
    var query = [URLQueryItem(name: "sort", value: "ASCENDING")]
    if let revision { query.append(URLQueryItem(name: "revision", value: revision)) }
    return await get(
      baseURL, path: "inApps/v2/history/" + transactionId, query: query, id: transactionId
    ).flatMap { (body: [UInt8]) in
      guard let page = try? JSONDecoder().decode(TransactionHistoryPage.self, from: Data(body))
      else { return .failure(.retryable("server_api_bad_response")) }
      return .success(page)
    }
  }

  private func get(_ baseURL: URL, path: String, query: [URLQueryItem], id: String) async
    -> Result<[UInt8], TransactionLookupFailure>
  {
    guard Self.isValidId(id) else {
      return .failure(.refused(status: 400, "invalid transaction id"))
    }
    guard let token = AppStoreAPIToken.make(key: key, bundleId: bundleId) else {
      return .failure(.unauthorized)
    }
    var components = URLComponents(
      url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)
    if !query.isEmpty { components?.queryItems = query }
    guard let url = components?.url else {
      return .failure(.refused(status: 400, "could not build the request"))
    }
    let answer: (status: Int, body: [UInt8])
    do {
      answer = try await transport.get(
        url: url, headers: ["Authorization": "Bearer " + token], timeout: timeout)
    } catch ReceiptTransportError.timedOut {
      return .failure(.retryable("server_api_timeout"))
    } catch {
      return .failure(.retryable("server_api_unreachable"))
    }
    switch answer.status {
    case 200: return .success(answer.body)
    case 401: return .failure(.unauthorized)
    case 404: return .failure(.notFound)
    case 429, 500...599: return .failure(.retryable("server_api_http_\(answer.status)"))
    default:
      let message = AppStoreAPIError(body: answer.body)?.errorMessage
      return .failure(.refused(status: answer.status, message ?? "no detail"))
    }
  }
}
