import Foundation
import AppAuth
import StorekeeperLogging
import Testing

@Suite struct JWTVerifierTests {
  let vectors = Vectors.loaded
  static let logger = Logger(label: "app-auth-tests", level: .critical)

  func verifier(_ keys: any JWTKeySource, leeway: Double = 30) -> JWTVerifier {
    let now = vectors.now
    return JWTVerifier(
      settings: .init(issuer: vectors.issuer, audience: vectors.audience, leewaySeconds: leeway),
      keys: keys, now: { now })
  }

  var secret: JWTVerifier {
    verifier(StaticKeySource(.hmac(secret: Array(vectors.secret.utf8))))
  }

  var jwks: JWTVerifier {
    verifier(JWKSKeySource(fetcher: FakeJWKSFetcher(Vectors.jwksBytes), logger: Self.logger))
  }

  func refusal(_ verifier: JWTVerifier, _ token: String) async -> JWTError? {
    do {
      _ = try await verifier.verify(token)
      return nil
    } catch {
      return error
    }
  }

  @Test func acceptsRS256AndES256FromTheKeySet() async throws {
    for name in ["rs256", "es256"] {
      let claims = try await jwks.verify(try #require(vectors.valid[name]))
      #expect(claims.sub == "user-42", "\(name)")
    }
  }

  @Test func acceptsHS256WithTheSharedSecret() async throws {
    #expect(try await secret.verify(try #require(vectors.valid["hs256"])).sub == "user-42")
    #expect(try await secret.verify(try #require(vectors.valid["audience_array"])).sub == "user-42")
  }

  @Test func honoursTheLeewayAndNothingBeyondIt() async throws {
    for name in ["expired_within_leeway", "nbf_within_leeway"] {
      _ = try await secret.verify(try #require(vectors.valid[name]))
      #expect(await refusal(verifier(secret.keys, leeway: 0), vectors.valid[name] ?? "") != nil)
    }
    #expect(await refusal(secret, vectors.invalid["expired"] ?? "") == .expired)
    #expect(await refusal(secret, vectors.invalid["not_yet_valid"] ?? "") == .notYetValid)
  }

  @Test func refusesWrongClaims() async {
    #expect(await refusal(secret, vectors.invalid["wrong_issuer"] ?? "") == .wrongIssuer)
    #expect(await refusal(secret, vectors.invalid["wrong_audience"] ?? "") == .wrongAudience)
    #expect(await refusal(secret, vectors.invalid["no_exp"] ?? "") == .missingClaim("exp"))
    #expect(await refusal(secret, vectors.invalid["no_sub"] ?? "") == .missingClaim("sub"))
  }

  @Test func refusesBadSignatures() async {
    #expect(await refusal(secret, vectors.invalid["wrong_secret"] ?? "") == .badSignature)
    #expect(await refusal(jwks, vectors.invalid["rs256_other_key"] ?? "") == .badSignature)
    let valid = vectors.valid["hs256"] ?? ""
    var tampered = Array(valid)
    let index = tampered.lastIndex(of: ".").map { $0 - 5 } ?? 0
    tampered[index] = tampered[index] == "A" ? "B" : "A"
    #expect(await refusal(secret, String(tampered)) == .badSignature)
  }

  @Test func refusesAlgNoneAndAlgorithmConfusion() async {
    #expect(
      await refusal(secret, vectors.invalid["alg_none"] ?? "") == .unsupportedAlgorithm("none"))
    #expect(await refusal(jwks, vectors.invalid["alg_none"] ?? "") == .unsupportedAlgorithm("none"))
    // An HS256 token "signed" with the RSA public key: no HMAC key exists in a key set.
    for name in ["hs256_with_rsa_pem_as_secret", "hs256_with_rsa_modulus_as_secret"] {
      #expect(await refusal(jwks, vectors.invalid[name] ?? "") == .unknownKey("rsa-1"), "\(name)")
    }
    // ES256 naming the RSA key's id finds no ES256 key with that id.
    #expect(await refusal(jwks, vectors.invalid["es256_signed_by_rsa_kid"] ?? "") != nil)
    // An RS256 token against the shared secret.
    #expect(
      await refusal(secret, vectors.valid["rs256"] ?? "") == .unsupportedAlgorithm("RS256"))
  }

  @Test func refusesMalformedAndOversizeTokens() async {
    for token in ["", "a.b", "a.b.c.d", "!!.??.**", "eyJhbGciOiJIUzI1NiJ9..sig", "e30.e30.e30"] {
      #expect(await refusal(secret, token) != nil, "\(token)")
    }
    let huge = String(repeating: "A", count: JWTVerifier.maxTokenBytes + 1)
    #expect(await refusal(secret, huge) == .oversize)
  }

  /// The header is read before the signature is checked, by a decoder that hashes keys: a run
  /// of combining marks is refused unread (else a signature check would refuse it, after).
  @Test func refusesAHeaderWithARunOfCombiningMarksBeforeDecodingIt() async {
    let marks = String(repeating: "\u{301}", count: 31)
    let header = Data(#"{"alg":"HS256","a\#(marks)":1}"#.utf8).base64EncodedString()
      .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
      .replacingOccurrences(of: "=", with: "")
    #expect(await refusal(secret, header + ".e30.c2ln") == .malformed("header"))
  }

  /// A 401 never says which check failed: an expired token is told what a forged one is.
  @Test func everyFailedCheckSaysTheSameToTheClient() {
    let checks: [JWTError] = [
      .oversize, .malformed("x"), .unsupportedAlgorithm("none"), .unknownKey("k"), .badSignature,
      .expired, .notYetValid, .wrongIssuer, .wrongAudience, .missingClaim("exp"),
    ]
    for check in checks {
      #expect(check.publicReason == JWTError.badSignature.publicReason, "\(check)")
    }
  }
}
