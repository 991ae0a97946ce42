import Testing

@testable import StorekeeperCore

@Suite struct ListPageTests {
  @Test func itemsGoUnderTheListingsNameBesideTheCursor() throws {
    let text = try JSONCoding.text(ListPage("orders", ["a", "b"], next: "b"))
    #expect(text == #"{"next_cursor":"b","orders":["a","b"]}"#)
  }

  @Test func theLastPageHasNoCursor() throws {
    let text = try JSONCoding.text(ListPage("entries", [Int](), next: nil))
    #expect(text == #"{"entries":[]}"#)
  }
}
