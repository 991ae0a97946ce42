import Foundation

/// `POST /inApps/v1/notifications/history` of the App Store Server API: the notifications Apple
/// sent in a time range (only those that never reached the server, when asked), one page at a
/// time. What a server uses to recover notifications Apple gave up re-sending.
public struct NotificationHistoryClient: Sendable {
  public enum Failure: Error, Sendable, Equatable {
    /// Worth trying again later: no answer, a timeout, 429 or a 5xx.
    case retryable(String)
    /// Apple refused the request itself (a bad key, a range out of bounds): retrying the
    /// same request will not help.
    case refused(String)
  }

  /// Apple's production endpoint; the sandbox one is `api.storekit-sandbox.itunes.apple.com`.
  public static let productionURL = URL(string: "https://api.storekit.itunes.apple.com")!

  let baseURL: URL
  public let key: AppStoreAPIKey
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

  /// One page of notifications first sent in [startMs, endMs).
  public func page(
    startMs: Int64, endMs: Int64, onlyFailures: Bool, paginationToken: String? = nil
  ) async -> Result<NotificationHistoryPage, Failure> {
    guard let token = AppStoreAPIToken.make(key: key, bundleId: bundleId) else {
      return .failure(.refused("could not sign the API token"))
    }
    var components = URLComponents(
      url: baseURL.appendingPathComponent("inApps/v1/notifications/history"),
      resolvingAgainstBaseURL: false)
    if let paginationToken {
      components?.queryItems = [URLQueryItem(name: "paginationToken", value: paginationToken)]
    }
    guard let url = components?.url,
      let body = try? JSONSerialization.data(
        withJSONObject: ["startDate": startMs, "endDate": endMs, "onlyFailures": onlyFailures])
    else { return .failure(.refused("could not build the request")) }
    let answer: (status: Int, body: [UInt8])
    do {
      answer = try await transport.post(
        url: url, body: [UInt8](body), headers: ["Authorization": "Bearer " + token],
        timeout: timeout)
    } catch {
      return .failure(.retryable("notification history unreachable: \(error)"))
    }
    switch answer.status {
    case 200:
      guard
        let page = try? JSONDecoder().decode(NotificationHistoryPage.self, from: Data(answer.body))
      else { return .failure(.retryable("notification history answer is not readable")) }
      return .success(page)
    case 429, 500...599:
      return .failure(.retryable("notification history answered \(answer.status)"))
    default:
      let message = AppStoreAPIError(body: answer.body)?.errorMessage
      return .failure(
        .refused("notification history answered \(answer.status): \(message ?? "no detail")"))
    }
  }
}
