import Foundation

/// `GET /inApps/v1/subscriptions/{originalTransactionId}` of the App Store Server API (Get All
/// Subscription Statuses): what Apple holds now about a customer's subscriptions, whatever
/// notifications did or did not arrive. Signs its bearer token like every Server API call
/// (`AppStoreAPIToken`).
public struct SubscriptionStatusClient: Sendable {
  public enum Failure: Error, Sendable, Equatable {
    /// Worth trying again later: no answer, a timeout, a 5xx or an unreadable answer.
    case unreachable(String)
    /// 429: Apple's rate limit; slow down before asking again.
    case rateLimited
    /// 401: Apple refuses the token; the key settings are wrong, not the subscription.
    case unauthorized
    /// 404 or 400 about this transaction id: Apple does not know it (another environment,
    /// another app); retrying will not help.
    case notFound(String)
    /// Any other refusal.
    case refused(String)
  }

  let baseURL: URL
  let key: AppStoreAPIKey
  let bundleId: String
  let transport: any ReceiptTransport
  let timeout: Duration

  public init(
    baseURL: URL, key: AppStoreAPIKey, bundleId: String,
    transport: any ReceiptTransport = URLSessionReceiptTransport(), timeout: Duration = .seconds(10)
  ) {
    self.baseURL = baseURL
    self.key = key
    self.bundleId = bundleId
    self.transport = transport
    self.timeout = timeout
  }

  public func statuses(originalTransactionId: String) async -> Result<
    SubscriptionStatuses, Failure
  > {
    // Apple's transaction ids are digits; anything else never reaches the URL path.
    guard !originalTransactionId.isEmpty, originalTransactionId.count <= 64,
      originalTransactionId.allSatisfy({ $0.isASCII && ($0.isNumber || $0.isLetter) })
    else { return .failure(.notFound("not a transaction id: \(originalTransactionId)")) }
    guard let token = AppStoreAPIToken.make(key: key, bundleId: bundleId) else {
      return .failure(.refused("could not sign the API token"))
    }
    let url = baseURL.appendingPathComponent("inApps/v1/subscriptions/\(originalTransactionId)")
    let answer: (status: Int, body: [UInt8])
    do {
      answer = try await transport.get(
        url: url, headers: ["Authorization": "Bearer " + token], timeout: timeout)
    } catch {
      return .failure(.unreachable("subscription statuses unreachable: \(error)"))
    }
    switch answer.status {
    case 200:
      guard
        let statuses = try? JSONDecoder().decode(SubscriptionStatuses.self, from: Data(answer.body))
      else { return .failure(.unreachable("subscription statuses answer is not readable")) }
      return .success(statuses)
    case 401: return .failure(.unauthorized)
    case 429: return .failure(.rateLimited)
    case 500...599: return .failure(.unreachable("subscription statuses answered \(answer.status)"))
    case 400, 404:
      return .failure(.notFound("answered \(answer.status): \(Self.message(answer.body))"))
    default:
      return .failure(.refused("answered \(answer.status): \(Self.message(answer.body))"))
    }
  }

  private static func message(_ body: [UInt8]) -> String {
    guard let error = AppStoreAPIError(body: body) else { return "no detail" }
    return "\(error.errorCode.map(String.init) ?? "-") \(error.errorMessage ?? "")"
  }
}
