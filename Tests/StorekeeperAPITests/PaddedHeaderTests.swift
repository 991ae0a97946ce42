import Testing

@testable import StorekeeperAPI

/// Headers a client pads with whitespace up to the head's limit are read in one pass: trimming
/// a substring by reassigning `dropLast()` counted it each time, and an `If-None-Match`
/// candidate with 16 KiB of spaces before its comma cost a catalog read over a second of CPU.
@Suite struct PaddedHeaderTests {
  static let padding = String(repeating: " ", count: 64_000)

  @Test func anIfNoneMatchCandidatePaddedWithSpacesIsComparedInOnePass() {
    #expect(CatalogRoutes.matches("\"x\"" + Self.padding + ",", "\"x\""))
    #expect(!CatalogRoutes.matches("\"y\"" + Self.padding + ", W/\"z\"" + Self.padding, "\"x\""))
    #expect(CatalogRoutes.matches(Self.padding + "W/\"x\"" + Self.padding, "\"x\""))
  }

  @Test func anAcceptRangePaddedWithSpacesIsReadInOnePass() {
    // Past its 4 KiB bound an Accept is JSON unread; within it, padding costs nothing more.
    let padded = "application/xml" + String(repeating: " ", count: 4_000) + ";q=1"
    #expect(ResponseFormat.preferred(padded) == .xml)
    #expect(ResponseFormat.preferred("text/xml" + Self.padding) == .json)
  }
}
