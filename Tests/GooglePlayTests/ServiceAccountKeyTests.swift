import COpenSSL
import Foundation
import GooglePlay
import JOSE
import Testing

@testable import FakeGooglePlay

@Suite struct ServiceAccountKeyTests {
  static func fakeKeyFile() async throws -> [String: Any] {
    let bytes = try await FakeKeyFile.bytes.value
    return try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any] ?? [:]
  }

  static func encode(_ object: [String: Any]) throws -> [UInt8] {
    [UInt8](try JSONSerialization.data(withJSONObject: object))
  }

  @Test func decodesTheKeyFileGoogleHandsOut() async throws {
    let file = try await Self.fakeKeyFile()
    let key = try ServiceAccountKey(json: try Self.encode(file))
    #expect(key.clientEmail == file["client_email"] as? String)
    #expect(key.privateKeyId == file["private_key_id"] as? String)
    #expect(key.tokenURI.absoluteString == file["token_uri"] as? String)
  }

  @Test func refusesEachBadFieldByName() async throws {
    let file = try await Self.fakeKeyFile()
    let cases: [(String, Any?, String)] = [
      ("client_email", nil, "client_email"), ("client_email", 7, "client_email"),
      ("client_email", "no-at-sign", "client_email"),
      (
        "private_key", "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        "private_key"
      ),
      ("private_key", nil, "private_key"), ("token_uri", nil, "token_uri"),
      ("token_uri", "http://oauth2.example.com/token", "token_uri"),
      ("token_uri", "ftp://127.0.0.1/token", "token_uri"), ("private_key_id", "", "private_key_id"),
      ("type", "authorized_user", "type"),
    ]
    for (field, value, named) in cases {
      var changed = file
      changed[field] = value
      #expect(throws: ServiceAccountKeyError.self) {
        try ServiceAccountKey(json: try Self.encode(changed))
      }
      do {
        _ = try ServiceAccountKey(json: try Self.encode(changed))
      } catch let error as ServiceAccountKeyError {
        #expect(error.field == named, "\(field)=\(String(describing: value)): \(error)")
        #expect(error.description.contains(named))
      }
    }
  }

  @Test func refusesWhatIsNoKeyFileAtAll() {
    #expect(throws: ServiceAccountKeyError.notJSONObject) {
      try ServiceAccountKey(json: Array("[1]".utf8))
    }
    #expect(throws: ServiceAccountKeyError.notJSONObject) {
      try ServiceAccountKey(json: Array("nope".utf8))
    }
    #expect(throws: ServiceAccountKeyError.tooLarge) {
      try ServiceAccountKey(
        json: [UInt8](repeating: 0x20, count: ServiceAccountKey.maxFileBytes + 1))
    }
    #expect(throws: ServiceAccountKeyError.unreadable("/nonexistent/key.json")) {
      try ServiceAccountKey(contentsOf: "/nonexistent/key.json")
    }
  }

  /// The assertion checked apart from the code that made it: OpenSSL verifies the signature
  /// with the public half of the key file's PEM, and the claims are read back as JSON.
  @Test func signsAnAssertionOpenSSLVerifies() async throws {
    let file = try await Self.fakeKeyFile()
    let key = try ServiceAccountKey(json: try Self.encode(file))
    let now = Date(timeIntervalSince1970: 1_700_000_000)
    let assertion = try #require(JWTAssertion.make(key: key, now: now))
    let parts = assertion.split(separator: ".")
    #expect(parts.count == 3)
    let header =
      try JSONSerialization.jsonObject(with: Data(try #require(Base64URL.decode(parts[0]))))
      as? [String: Any]
    let claims =
      try JSONSerialization.jsonObject(with: Data(try #require(Base64URL.decode(parts[1]))))
      as? [String: Any]
    #expect(header?["alg"] as? String == "RS256")
    #expect(header?["kid"] as? String == file["private_key_id"] as? String)
    #expect(claims?["iss"] as? String == file["client_email"] as? String)
    #expect(claims?["scope"] as? String == "https://www.googleapis.com/auth/androidpublisher")
    #expect(claims?["aud"] as? String == file["token_uri"] as? String)
    #expect((claims?["iat"] as? NSNumber)?.int64Value == 1_700_000_000)
    #expect((claims?["exp"] as? NSNumber)?.int64Value == 1_700_003_600)
    let signature = try #require(Base64URL.decode(parts[2]))
    let message = Array(assertion.utf8.prefix(parts[0].utf8.count + 1 + parts[1].utf8.count))
    let pem = Array(try #require(file["private_key"] as? String).utf8)
    #expect(Self.opensslVerifies(pem: pem, signature: signature, message: message))
    var tampered = message
    tampered[tampered.count - 1] ^= 1
    #expect(!Self.opensslVerifies(pem: pem, signature: signature, message: tampered))
  }

  static func opensslVerifies(pem: [UInt8], signature: [UInt8], message: [UInt8]) -> Bool {
    guard let bio = BIO_new_mem_buf(pem, Int32(pem.count)) else { return false }
    defer { BIO_free(bio) }
    guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else { return false }
    defer { EVP_PKEY_free(key) }
    guard let context = EVP_MD_CTX_new() else { return false }
    defer { EVP_MD_CTX_free(context) }
    return EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, key) == 1
      && EVP_DigestVerify(context, signature, signature.count, message, message.count) == 1
  }
}
