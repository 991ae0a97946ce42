import Foundation
import OutboundHTTP

/// The Google Play Developer API (androidpublisher v3) calls a purchase server makes: one-time
/// products (get, acknowledge, consume), subscriptions (`subscriptionsv2.get`, acknowledge) and
/// voided purchases. Each call gets a bearer token from the `AccessTokenSource` and keeps one
/// deadline, `timeout`, for the token and the request together; every refusal is a
/// `GooglePlayFailure` saying what it means.
public struct GooglePlayClient: Sendable {
  public static let defaultBaseURL: URL = {
    guard let url = URL(string: "https://androidpublisher.googleapis.com") else {
      preconditionFailure("the default Android Publisher URL is not a URL")
    }
    return url
  }()
  /// Purchase answers are a few kilobytes; a voided page of 1,000 entries a few hundred.
  static let maxAnswerBytes = 4 * 1024 * 1024

  public let packageName: String
  public let baseURL: URL
  public let tokens: AccessTokenSource
  let transport: any GooglePlayTransport
  let timeout: Duration

  /// `packageName` is the default of every call (`GOOGLE_PLAY_PACKAGE_NAME`); a call may name
  /// another.
  public init(
    packageName: String, tokens: AccessTokenSource, baseURL: URL = defaultBaseURL,
    transport: any GooglePlayTransport = HTTPGooglePlayTransport(),
    timeout: Duration = .seconds(10)
  ) {
    self.packageName = packageName
    self.baseURL = baseURL
    self.tokens = tokens
    self.transport = transport
    self.timeout = timeout
  }

  /// The body of a 2xx answer to `method` on `path` (segments, each checked and escaped),
  /// or the failure. `json` is sent as the body of a POST.
  func send(
    _ method: String, _ segments: [PathSegment], query: [(String, String)] = [],
    json: [String: String]? = nil
  ) async throws(GooglePlayFailure) -> [UInt8] {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    var path = "androidpublisher/v3"
    for segment in segments {
      guard let text = segment.encoded else {
        throw .badRequest("\(segment.name) cannot be sent: \(segment.value.prefix(80))")
      }
      path += "/" + text
    }
    var text = baseURL.absoluteString
    if !text.hasSuffix("/") { text += "/" }
    text += path
    if !query.isEmpty { text += "?" + FormEncoding.encode(query) }
    guard let url = URL(string: text) else { throw .badRequest("could not build the URL") }
    var body: [UInt8]?
    if let json {
      guard let data = try? JSONSerialization.data(withJSONObject: json, options: .sortedKeys)
      else { throw .badRequest("could not encode the body") }
      body = [UInt8](data)
    } else if method == "POST" {
      body = []
    }
    let token = try await tokens.token()
    let remaining = deadline - clock.now
    guard remaining > .zero else { throw .retryable(.timeout, retryAfter: nil) }
    var headers = ["Authorization": "Bearer " + token, "Accept": "application/json"]
    if body != nil { headers["Content-Type"] = "application/json" }
    let answer: OutboundHTTPAnswer
    do {
      answer = try await transport.send(
        method: method, url: url, headers: headers, body: body, timeout: remaining)
    } catch {
      throw Self.transportFailure(error, what: "Google Play Developer API")
    }
    if answer.status == 401 { await tokens.invalidate(token) }
    guard (200...299).contains(answer.status) else {
      throw Self.classify(answer, what: "Google Play Developer API")
    }
    guard answer.body.count <= Self.maxAnswerBytes else {
      throw .retryable(
        .unreadable("answer larger than \(Self.maxAnswerBytes) bytes"), retryAfter: nil)
    }
    return answer.body
  }

  /// Decodes a 2xx body as the call's schema; anything else is worth another try later.
  func decode<Answer: Decodable>(_ type: Answer.Type, _ body: [UInt8]) throws(GooglePlayFailure)
    -> Answer
  {
    do {
      return try JSONDecoder().decode(type, from: Data(body))
    } catch {
      throw .retryable(
        .unreadable("\(type) answer: \(error)".prefix(300).description), retryAfter: nil)
    }
  }

  /// What a thrown transport error means.
  static func transportFailure(_ error: any Error, what: String) -> GooglePlayFailure {
    switch error {
    case OutboundHTTPError.deadlinePassed: .retryable(.timeout, retryAfter: nil)
    case OutboundHTTPError.failed(let cause):
      .retryable(.unreachable("\(what): \(cause)".prefix(300).description), retryAfter: nil)
    default: .retryable(.unreachable("\(what): \(error)".prefix(300).description), retryAfter: nil)
    }
  }

  /// What a status other than 2xx means (Google's "Handling errors" for the Developer API).
  static func classify(_ answer: OutboundHTTPAnswer, what: String) -> GooglePlayFailure {
    let text = GoogleErrorBody.text(answer.body, status: answer.status)
    switch answer.status {
    case 429, 500...599:
      return .retryable(
        .status(answer.status), retryAfter: RetryAfter.parse(answer.headers["retry-after"]))
    case 401, 403: return .credentialsRefused(status: answer.status, text)
    case 404, 410: return .unknownToken(status: answer.status, text)
    // A one-time token asked for under another product: Google knows no such purchase of it,
    // which is what a 404 says of a token it knows under no product.
    case 400
    where GoogleErrorBody(body: answer.body)?.reason == "purchaseTokenDoesNotMatchProductId":
      return .unknownToken(status: answer.status, text)
    case 400: return .badRequest(text)
    default: return .unexpected(status: answer.status, text)
    }
  }
}
