import Foundation
import Testing

@testable import StorekeeperCore

@Suite struct AccountTokenTests {
  @Test func isALowercaseVersion4UUID() throws {
    for _ in 0..<1000 {
      let token = AccountToken.make()
      let parsed = try #require(UUID(uuidString: token), "\(token)")
      #expect(parsed.uuidString.lowercased() == token)
      let characters = Array(token)
      #expect(characters[14] == "4", "version nibble: \(token)")
      #expect("89ab".contains(characters[19]), "variant: \(token)")
    }
  }

  @Test func everyTokenIsNew() {
    let tokens = (0..<10_000).map { _ in AccountToken.make() }
    #expect(Set(tokens).count == tokens.count)
  }

  @Test func onlyAUUIDIsNormalized() {
    #expect(
      AccountToken.normalized("6F1E9A3C-2B9D-4E4B-8A77-0C1D2E3F4A5B")
        == "6f1e9a3c-2b9d-4e4b-8a77-0c1d2e3f4a5b")
    // Right length and characters, dashes in the wrong places: a uuid column would refuse it.
    #expect(AccountToken.normalized("6F1E9A3C2-B9D-4E4B-8A77-0C1D2E3F4A5B") == nil)
    #expect(AccountToken.normalized("------------------------------------") == nil)
    #expect(AccountToken.normalized("6f1e9a3c-2b9d-4e4b-8a77-0c1d2e3f4a5") == nil)
    #expect(AccountToken.normalized("6g1e9a3c-2b9d-4e4b-8a77-0c1d2e3f4a5b") == nil)
    #expect(AccountToken.normalized(nil) == nil)
  }
}
