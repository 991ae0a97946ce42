import Foundation
import GooglePlay
import HTTP
import Testing

/// Each status Google may answer, from a canned loopback server, read as its meaning.
@Suite struct ClientFailureTests {
  static func client(_ base: URL, timeout: Duration = .seconds(60)) async throws
    -> GooglePlayClient
  {
    let canned = try await cannedKeyFile()
    let json = try JSONSerialization.jsonObject(with: Data(canned)) as? [String: Any]
    var file = json ?? [:]
    file["token_uri"] = base.absoluteString + "/token"
    let key = try ServiceAccountKey(json: [UInt8](try JSONSerialization.data(withJSONObject: file)))
    return GooglePlayClient(
      packageName: "com.example.app", tokens: AccessTokenSource(key: key), baseURL: base,
      timeout: timeout)
  }

  static func cannedKeyFile() async throws -> [UInt8] {
    let bytes = try JSONSerialization.data(
      withJSONObject: try await ServiceAccountKeyTests.fakeKeyFile())
    return [UInt8](bytes)
  }

  static func failure(status: Int, headers: HTTPHeaders = .init(), body: String = "")
    async throws -> GooglePlayFailure?
  {
    try await CannedServer.with({ _ in
      Response(status: status, headers: headers, body: Array(body.utf8))
    }) { base async throws -> GooglePlayFailure? in
      do {
        _ = try await client(base).productPurchase(productId: "gold", token: "tok")
        return nil
      } catch let error as GooglePlayFailure {
        return error
      }
    }
  }

  static let googleError = #"{"error":{"code":0,"message":"words","status":"WHAT"}}"#

  @Test func serverErrorsAndQuotaAreRetryableWithRetryAfter() async throws {
    #expect(
      try await Self.failure(status: 503, headers: ["Retry-After": "7"], body: Self.googleError)
        == .retryable(.status(503), retryAfter: .seconds(7)))
    #expect(try await Self.failure(status: 500) == .retryable(.status(500), retryAfter: nil))
    #expect(
      try await Self.failure(status: 429, headers: ["Retry-After": "30"])
        == .retryable(.status(429), retryAfter: .seconds(30)))
  }

  @Test func aRefusedServiceAccountIsAConfigurationProblem() async throws {
    #expect(
      try await Self.failure(status: 401, body: Self.googleError)
        == .credentialsRefused(status: 401, "WHAT: words"))
    #expect(
      try await Self.failure(status: 403, body: Self.googleError)
        == .credentialsRefused(status: 403, "WHAT: words"))
  }

  @Test func anUnknownTokenIsItsOwnFailure() async throws {
    #expect(
      try await Self.failure(status: 404) == .unknownToken(status: 404, "HTTP 404, no error body"))
    #expect(
      try await Self.failure(status: 410) == .unknownToken(status: 410, "HTTP 410, no error body"))
  }

  @Test func badRequestAndAnythingElse() async throws {
    #expect(
      try await Self.failure(status: 400, body: Self.googleError) == .badRequest("WHAT: words"))
    #expect(
      try await Self.failure(status: 418) == .unexpected(status: 418, "HTTP 418, no error body"))
  }

  @Test func aBodyThatIsNotTheSchemaIsRetryable() async throws {
    let failure = try await Self.failure(status: 200, body: #"{"purchaseTimeMillis": true}"#)
    #expect(failure?.isRetryable == true)
    if case .retryable(.unreadable, _) = failure {
    } else {
      Issue.record("\(String(describing: failure))")
    }
  }

  @Test func theDeadlineIsKept() async throws {
    let (failure, elapsed) = try await CannedServer.with({ request in
      // The token answers at once; the API call hangs far past the deadline.
      try? await Task.sleep(for: .seconds(30))
      return Response(status: 200, body: Array("{}".utf8))
    }) { base async throws -> (GooglePlayFailure?, Duration) in
      let client = try await Self.client(base, timeout: .seconds(1))
      _ = try await client.tokens.token()
      let started = ContinuousClock.now
      do {
        _ = try await client.subscriptionPurchase(token: "t")
        return (nil, ContinuousClock.now - started)
      } catch let error as GooglePlayFailure { return (error, ContinuousClock.now - started) }
    }
    #expect(failure == .retryable(.timeout, retryAfter: nil))
    // Not a speed check: the answer would take 30 s, so anything well short of that means the
    // deadline ended the call rather than Google's answer (a loaded machine can be slow).
    #expect(elapsed < .seconds(20))
  }

  @Test func anUnreachableGoogleIsRetryable() async throws {
    let base = try #require(URL(string: "http://127.0.0.1:9"))
    await #expect {
      _ = try await Self.client(base).productPurchase(productId: "gold", token: "tok")
    } throws: { ($0 as? GooglePlayFailure)?.isRetryable == true }
  }

  @Test func idsThatCannotGoInAURLAreNeverSent() async throws {
    let base = try #require(URL(string: "http://127.0.0.1:9"))
    for (productId, token) in [
      ("gold", "a/b"), ("gold/../x", "t"), ("gold", ""), ("gold", "t?x=1"),
    ] {
      await #expect {
        _ = try await Self.client(base).productPurchase(productId: productId, token: token)
      } throws: { if case .badRequest = $0 as? GooglePlayFailure { true } else { false } }
    }
  }
}
