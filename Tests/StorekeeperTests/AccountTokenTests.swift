import Foundation
import Testing

@testable import Storekeeper

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
}
