import Foundation
import OutboundHTTP

/// Bearer tokens for the Android Publisher API: signs a `JWTAssertion` with the service
/// account key, exchanges it at the key's `token_uri`
/// (`grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`) and keeps the token until
/// `refreshMargin` before it expires. One exchange at a time: callers arriving while one is
/// under way wait for it instead of starting their own, so a burst of requests costs Google
/// one token request.
public actor AccessTokenSource {
  public static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
  /// A token answer is a few hundred bytes.
  static let maxAnswerBytes = 64 * 1024

  public let key: ServiceAccountKey
  private let transport: any GooglePlayTransport
  private let timeout: Duration
  private let refreshMargin: TimeInterval
  private let now: @Sendable () -> Date
  private var cached: AccessToken?
  private var inFlight: Task<Result<AccessToken, GooglePlayFailure>, Never>?
  /// How many exchanges were started (for tests and metrics).
  public private(set) var exchangeCount = 0

  public init(
    key: ServiceAccountKey, transport: any GooglePlayTransport = HTTPGooglePlayTransport(),
    timeout: Duration = .seconds(10), refreshMargin: Duration = .seconds(300),
    now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.key = key
    self.transport = transport
    self.timeout = timeout
    self.refreshMargin = Double(refreshMargin.components.seconds)
    self.now = now
  }

  /// A token usable now: the cached one, or a fresh one.
  public func token() async throws(GooglePlayFailure) -> String {
    if let cached, now() < cached.usableUntil { return cached.value }
    let task: Task<Result<AccessToken, GooglePlayFailure>, Never>
    if let inFlight {
      task = inFlight
    } else {
      exchangeCount += 1
      let key = self.key
      let transport = self.transport
      let timeout = self.timeout
      let margin = refreshMargin
      let now = self.now
      task = Task {
        await Self.exchange(
          key: key, transport: transport, timeout: timeout, margin: margin, now: now)
      }
      inFlight = task
    }
    let result = await task.value
    // Only the first waiter back clears it; a later exchange may have started meanwhile.
    if inFlight == task { inFlight = nil }
    switch result {
    case .success(let token):
      cached = token
      return token.value
    case .failure(let failure):
      throw failure
    }
  }

  /// Drops the cached token (Google answered 401 to it: revoked, or the clock is off), so the
  /// next call exchanges a new assertion.
  public func invalidate(_ value: String) {
    if cached?.value == value { cached = nil }
  }

  private static func exchange(
    key: ServiceAccountKey, transport: any GooglePlayTransport, timeout: Duration,
    margin: TimeInterval, now: @Sendable () -> Date
  ) async -> Result<AccessToken, GooglePlayFailure> {
    let issuedAt = now()
    guard let assertion = JWTAssertion.make(key: key, now: issuedAt) else {
      return .failure(.credentialsRefused(status: nil, "could not sign the token assertion"))
    }
    let form = FormEncoding.encode([("grant_type", grantType), ("assertion", assertion)])
    let answer: OutboundHTTPAnswer
    do {
      answer = try await transport.send(
        method: "POST", url: key.tokenURI,
        headers: [
          "Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json",
        ],
        body: Array(form.utf8), timeout: timeout)
    } catch {
      return .failure(GooglePlayClient.transportFailure(error, what: "token endpoint"))
    }
    switch answer.status {
    case 200:
      guard answer.body.count <= maxAnswerBytes,
        let decoded = try? JSONDecoder().decode(AccessToken.Answer.self, from: Data(answer.body)),
        !decoded.access_token.isEmpty, decoded.expires_in.isFinite, decoded.expires_in > 0,
        decoded.token_type.map({ $0.lowercased() == "bearer" }) ?? true
      else {
        return .failure(.retryable(.unreadable("token endpoint answer"), retryAfter: nil))
      }
      // A short-lived token is kept for half its life rather than not at all.
      let keep = max(decoded.expires_in - margin, decoded.expires_in / 2)
      return .success(
        AccessToken(value: decoded.access_token, usableUntil: issuedAt.addingTimeInterval(keep)))
    case 400, 401, 403:
      // invalid_grant, invalid_client, unauthorized_client: the key or its account is refused.
      return .failure(
        .credentialsRefused(
          status: answer.status, GoogleErrorBody.text(answer.body, status: answer.status)))
    default:
      return .failure(GooglePlayClient.classify(answer, what: "token endpoint"))
    }
  }
}
