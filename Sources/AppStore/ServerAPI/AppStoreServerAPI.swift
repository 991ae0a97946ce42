import Foundation

/// What every App Store Server API endpoint does alike: sign the bearer token
/// (`AppStoreAPIToken`), send the request to the environment's base URL within the timeout,
/// obey Apple's 429s (`AppleRateLimits`), read a 200 as the endpoint's JSON and anything else
/// as an `AppStoreServerAPIFailure`. The clients keep only what is their endpoint's: the path,
/// the query, the body, and what each failure means to their callers.
struct AppStoreServerAPI: Sendable {
  /// Tries of one request while Apple answers 429 with an instant near enough to wait for.
  static let rateLimitedTries = 3

  let key: AppStoreAPIKey
  let bundleId: String
  let transport: any ReceiptTransport
  let timeout: Duration
  var rateLimits: AppleRateLimits = .shared

  /// A GET of `path` under the environment's `baseURL`, or a POST of `json` (a
  /// JSONSerialization object) when there is one, unless `method` says otherwise.
  func send<Answer: Decodable>(
    _ path: String, method: String? = nil, query: [URLQueryItem] = [], json: [String: Any]? = nil,
    at baseURL: URL, as answer: Answer.Type
  ) async -> Result<Answer, AppStoreServerAPIFailure> {
    let answer = await exchange(path, method: method, query: query, json: json, at: baseURL)
    return answer.flatMap { answer in
      guard let decoded = try? JSONDecoder().decode(Answer.self, from: Data(answer.body)) else {
        return .failure(.unreadable)
      }
      return .success(decoded)
    }
  }

  /// The status and body of the endpoint's 2xx, whatever the body holds (Set App Account Token
  /// answers 200 without one, Send Consumption Information 202 Accepted).
  func exchange(
    _ path: String, method: String? = nil, query: [URLQueryItem] = [], json: [String: Any]? = nil,
    at baseURL: URL
  ) async -> Result<(status: Int, body: [UInt8]), AppStoreServerAPIFailure> {
    let method = method ?? (json == nil ? "GET" : "POST")
    var components = URLComponents(
      url: baseURL.appendingPathComponent(path), resolvingAgainstBaseURL: false)
    if !query.isEmpty { components?.queryItems = query }
    guard let url = components?.url else { return .failure(.unbuildable) }
    var body: [UInt8]?
    if let json {
      guard let data = try? JSONSerialization.data(withJSONObject: json) else {
        return .failure(.unbuildable)
      }
      body = [UInt8](data)
    }
    let endpoint = AppleRateLimits.endpoint(method: method, baseURL: baseURL, path: path)
    var tries = 0
    while true {
      tries += 1
      if let instant = rateLimits.blockedUntil(endpoint, now: Date()) {
        // Not before Apple's instant: wait for it when it is near, else leave it to the
        // caller's own schedule.
        let wait = instant.timeIntervalSinceNow
        guard wait <= Self.seconds(rateLimits.maximumWait) else {
          return .failure(.rateLimited(retryAt: instant, nil))
        }
        do {
          try await Task.sleep(for: .milliseconds(Int64((wait * 1000).rounded(.up)) + 1))
        } catch {
          return .failure(.unreachable(error))
        }
      }
      guard let token = AppStoreAPIToken.make(key: key, bundleId: bundleId) else {
        return .failure(.unsigned)
      }
      let answer: (status: Int, headers: [String: String], body: [UInt8])
      do {
        let exchanged = try await transport.exchange(
          method: method, url: url, body: body, headers: ["Authorization": "Bearer " + token],
          timeout: timeout)
        answer = (exchanged.status, exchanged.headers, exchanged.body)
      } catch {
        return .failure(.unreachable(error))
      }
      if answer.status == 429 {
        let retryAfter = answer.headers.first { $0.key.lowercased() == "retry-after" }?.value
        let instant = rateLimits.block(endpoint, retryAfter: retryAfter, now: Date())
        if tries >= Self.rateLimitedTries {
          return .failure(.rateLimited(retryAt: instant, AppStoreAPIError(body: answer.body)))
        }
        continue
      }
      guard (200...299).contains(answer.status) else {
        return .failure(.answered(status: answer.status, AppStoreAPIError(body: answer.body)))
      }
      return .success((answer.status, answer.body))
    }
  }

  private static func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
  }
}
