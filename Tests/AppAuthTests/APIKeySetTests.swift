import AppAuth
import Testing

@Suite struct APIKeySetTests {
  @Test func matchesByDigestAndNamesTheKey() {
    let plain = "k-0123456789abcdef0123456789abcdef"
    let hashed = "h-fedcba9876543210fedcba9876543210"
    let keys = APIKeySet([
      .init(name: "shop", digest: APIKeySet.digest(of: plain)),
      .init(name: "ci", digest: APIKeySet.digest(of: hashed)),
    ])
    #expect(keys.match(plain) == "shop")
    #expect(keys.match(hashed) == "ci")
    #expect(keys.match(String(plain.dropLast())) == nil)
    #expect(keys.match("") == nil)
  }
}
