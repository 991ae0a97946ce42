import Foundation
import GooglePlay
import HTTP
import Synchronization
import Testing

@testable import FakeGooglePlay

/// Serves a JWKS document held in memory, counting fetches.
final class MemoryKeyFetcher: PushKeyFetching {
  let document: Mutex<[UInt8]>
  let fetches = Mutex(0)
  init(_ document: [UInt8]) { self.document = Mutex(document) }
  func fetch() async throws -> [UInt8] {
    fetches.withLock { $0 += 1 }
    return document.withLock { $0 }
  }
}

@Suite struct PushTokenVerifierTests {
  static let audience = "https://storekeeper.example.com/v1/google/notifications"
  static let email = "pubsub-push@project.iam.gserviceaccount.com"

  /// A new RSA key, made off the global executor (see `onOwnThread`).
  static func freshKey() async throws -> FakeRSAKey { try await onOwnThread { try FakeRSAKey() } }

  struct Signer {
    let key: FakeRSAKey
    let kid: String
    var jwk: [String: String] { (try? key.publicJWK(kid: kid)) ?? [:] }

    func token(_ overrides: [String: Any?] = [:], kid: String? = nil) throws -> String {
      let now = Int64(Date().timeIntervalSince1970)
      var claims: [String: Any] = [
        "iss": "https://accounts.google.com", "aud": PushTokenVerifierTests.audience,
        "email": PushTokenVerifierTests.email, "email_verified": true, "iat": now,
        "exp": now + 3600, "sub": "1234",
      ]
      for (name, value) in overrides { claims[name] = value }
      return try FakeJWT.sign(
        header: ["alg": "RS256", "kid": kid ?? self.kid], claims: claims, key: key)
    }
  }

  static func jwks(_ signers: [Signer]) throws -> [UInt8] {
    [UInt8](try JSONSerialization.data(withJSONObject: ["keys": signers.map(\.jwk)]))
  }

  static func verifier(_ fetcher: MemoryKeyFetcher, minRefetch: Duration = .zero)
    -> PushTokenVerifier
  {
    PushTokenVerifier(
      settings: .init(audience: audience, serviceAccountEmail: email),
      keys: PushKeySource(fetcher: fetcher, minRefetchInterval: minRefetch, logger: FakePlay.quiet))
  }

  @Test func acceptsGooglesToken() async throws {
    let signer = Signer(key: try await Self.freshKey(), kid: "k1")
    let verifier = Self.verifier(MemoryKeyFetcher(try Self.jwks([signer])))
    let claims = try await verifier.verify(authorization: "Bearer " + (try signer.token()))
    #expect(claims.email == Self.email && claims.audience == Self.audience)
    _ = try await verifier.verify(token: try signer.token(["iss": "accounts.google.com"]))
  }

  @Test func refusesEachBadTokenForItsOwnReason() async throws {
    let signer = Signer(key: try await Self.freshKey(), kid: "k1")
    let forger = Signer(key: try await Self.freshKey(), kid: "k1")
    let verifier = Self.verifier(MemoryKeyFetcher(try Self.jwks([signer])))
    let now = Int64(Date().timeIntervalSince1970)
    let cases: [(String, PushTokenRefusal)] = [
      (try forger.token(), .badSignature),
      (try signer.token(["aud": "https://elsewhere.example.com"]), .wrongAudience),
      (
        try signer.token(["iss": "https://evil.example.com"]),
        .wrongIssuer("https://evil.example.com")
      ),
      (try signer.token(["email": "someone@gmail.com"]), .wrongEmail("someone@gmail.com")),
      (try signer.token(["email_verified": false]), .emailNotVerified),
      (try signer.token(["email_verified": nil]), .emailNotVerified),
      (try signer.token(["exp": now - 120, "iat": now - 3720]), .expired),
      (try signer.token(["iat": now + 600]), .issuedInFuture),
      (try signer.token(["exp": nil]), .missingClaim("exp")),
      ("a.b", .malformed("not three segments")),
      // Read before the signature: a run of combining marks is refused unread.
      (
        Data(#"{"alg":"RS256","kid":"k1","a\#(String(repeating: "\u{301}", count: 31))":1}"#.utf8)
          .base64EncodedString().replacingOccurrences(of: "+", with: "-")
          .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
          + ".e30.c2ln", .malformed("header")
      ),
    ]
    for (token, refusal) in cases {
      await #expect(throws: refusal) { try await verifier.verify(token: token) }
    }
    await #expect(throws: PushTokenRefusal.missingBearer) {
      try await verifier.verify(authorization: nil)
    }
    await #expect(throws: PushTokenRefusal.missingBearer) {
      try await verifier.verify(authorization: "Basic abc")
    }
  }

  @Test func anUnknownKidRefetchesOnceRateLimited() async throws {
    let old = Signer(key: try await Self.freshKey(), kid: "old")
    let rotated = Signer(key: try await Self.freshKey(), kid: "new")
    let fetcher = MemoryKeyFetcher(try Self.jwks([old]))
    let verifier = Self.verifier(fetcher, minRefetch: .seconds(60))
    _ = try await verifier.verify(token: try old.token())
    #expect(fetcher.fetches.withLock { $0 } == 1)
    // Made-up ids cannot make it fetch again within the interval...
    for n in 0..<5 {
      await #expect(throws: PushTokenRefusal.unknownKey("made-up-\(n)")) {
        try await verifier.verify(token: try old.token(kid: "made-up-\(n)"))
      }
    }
    #expect(fetcher.fetches.withLock { $0 } == 1)
    // ...while past it, a key Google rotated in is fetched the moment a token names it.
    let immediate = Self.verifier(fetcher, minRefetch: .zero)
    _ = try await immediate.verify(token: try old.token())
    #expect(fetcher.fetches.withLock { $0 } == 2)
    fetcher.document.withLock { $0 = (try? Self.jwks([old, rotated])) ?? [] }
    _ = try await immediate.verify(token: try rotated.token())
    #expect(fetcher.fetches.withLock { $0 } == 3)
    _ = try await immediate.verify(token: try rotated.token())
    #expect(fetcher.fetches.withLock { $0 } == 3)
  }

  @Test func noKeysAtAllFailsClosed() async throws {
    struct Down: PushKeyFetching {
      func fetch() async throws -> [UInt8] { throw PushKeyFetchError("down") }
    }
    let signer = Signer(key: try await Self.freshKey(), kid: "k1")
    let verifier = PushTokenVerifier(
      settings: .init(audience: Self.audience, serviceAccountEmail: Self.email),
      keys: PushKeySource(fetcher: Down(), logger: FakePlay.quiet))
    await #expect(throws: PushTokenRefusal.keysUnavailable) {
      try await verifier.verify(token: try signer.token())
    }
  }

  /// The fake's own pushes: received by a local server, their token checked against the
  /// fake's JWKS over HTTP, their body decoded.
  @Test func theFakesPushesVerifyAndDecode() async throws {
    let received = Mutex<[(String?, [UInt8])]>([])
    try await CannedServer.with({ request in
      received.withLock { $0.append((request.headers["Authorization"], request.body)) }
      return Response(status: 204)
    }) { receiver in
      let pushURL = receiver.appendingPathComponent(
        "androidpublisher/v3/applications/p/purchases/products/x/tokens/push")
      try await FakePlay.with({
        $0.pushURL = pushURL
        $0.pushAudience = Self.audience
        $0.pushEmail = Self.email
        $0.pushMinBackoff = .milliseconds(50)
      }) { play in
        let token = try await play.purchase(["product_id": "gold"])
        // Up to a minute for the push to arrive on a loaded machine; done as soon as it has.
        let deadline = ContinuousClock.now + .seconds(60)
        while received.withLock({ $0.isEmpty }), ContinuousClock.now < deadline {
          try await Task.sleep(for: .milliseconds(100))
        }
        let (authorization, body) = try #require(received.withLock { $0.first })
        let jwksURL = try #require(play.server.jwksURL)
        let verifier = PushTokenVerifier(
          settings: .init(audience: Self.audience, serviceAccountEmail: Self.email),
          keys: PushKeySource(
            // Generous: under a loaded test run the default 5 s fetch can run out.
            fetcher: HTTPPushKeyFetcher(url: jwksURL, timeout: .seconds(30)),
            logger: FakePlay.quiet))
        _ = try await verifier.verify(authorization: authorization)
        let push = try PubSubPushDecoder.decode(body)
        #expect(push.notification.purchaseToken == token)
        if case .oneTimeProduct(let n) = push.notification.content {
          #expect(n.type == .purchased && n.sku == "gold")
        } else {
          Issue.record("\(push)")
        }
      }
    }
  }
}
